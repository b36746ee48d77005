"""scipy.special for the eager kernels, imported at its first use: the import takes about
0.1 s, a fifth of `import tapeflow`, and most programs never call a special function."""

import importlib


class _Lazy:
    def __init__(self, name):
        self._name = name
        self._module = None

    def __getattr__(self, attribute):
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attribute)


special = _Lazy("scipy.special")
