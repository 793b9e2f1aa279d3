"""The gradebook in other systems' formats.

canvas      canvas.csv: the gradebook in Canvas's import format
gradescope  `drills gradescope-bundle`: a Gradescope autograder that runs `drills grade`
"""
