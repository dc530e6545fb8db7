# Sphinx configuration: a C project with Python docs is still a C project
project = "demo"


def setup(app):
    return {"version": "1"}
