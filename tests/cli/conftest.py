from cli_support import chat, cli_env, editor_env, model_server
from go_on_support import persisting_env

__all__ = ["chat", "cli_env", "editor_env", "model_server", "persisting_env"]
