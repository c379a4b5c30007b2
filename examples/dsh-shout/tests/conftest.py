pytest_plugins = ["dsh.testing"]
