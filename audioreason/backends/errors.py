"""The backends' one error type, below the registry and the loaders that both raise it."""


class BackendUnavailable(RuntimeError):
    """A role's weights cannot be found or loaded; the metric that needs it is reported unavailable."""
