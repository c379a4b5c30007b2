from cli_support import cli_env, model_server

__all__ = ["cli_env", "model_server"]
