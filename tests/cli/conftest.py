from cli_support import chat, cli_env, editor_env, model_server

__all__ = ["chat", "cli_env", "editor_env", "model_server"]
