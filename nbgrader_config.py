"""nbgrader configuration for this repository used as a course directory.

nbgrader's "source" notebooks are our solutions (the one source of truth) and
its "release" notebooks are the student versions in exercises/.
"""

c = get_config()  # noqa: F821 (injected by traitlets)

c.CourseDirectory.root = "."
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"
# Keep the gradebook out of the way of git.
c.CourseDirectory.db_url = "sqlite:///gradebook.db"
c.CourseDirectory.course_id = "reward-drills"
