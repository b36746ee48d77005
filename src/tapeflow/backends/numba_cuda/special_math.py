"""The device helpers of ops/special.py's templates (lgamma_f32 ... igammagrada_f64), made
from the CPU helpers' own Python source (numba_cpu/kernels/special_math.py), so that the
GPU computes the CPU's numbers: each function is rebuilt over a namespace in which the
helpers it calls are device functions, `math` offers libdevice's functions (on the
simulator NumPy's scalar ones, which return inf and NaN where math.* raises) and `np`
offers floor, fmod and the constants.

Imported by device_math when the first kernel is generated."""

import math
import types

import numpy as np


def _shim(name, **attributes):
    module = types.ModuleType(name)
    vars(module).update(attributes)
    return module


def _simulated_lgamma(x):
    # math.lgamma raises at the poles, where the device gives inf.
    return np.inf if x <= 0 and x == np.floor(x) else math.lgamma(x)


def _simulated_power(x, y):
    return np.float64(x) ** y


def _libraries(simulated, device, floor):
    """(math, np) as the rebuilt functions see them."""
    if simulated:
        library = {"lgamma": _simulated_lgamma, "exp": np.exp, "log": np.log, "tan": np.tan,
                   "sqrt": np.sqrt, "pow": _simulated_power, "erf": math.erf,
                   "erfc": math.erfc}
        floor_, fmod = np.floor, np.fmod
    else:
        library = {name: getattr(math, name)
                   for name in ("lgamma", "exp", "log", "tan", "sqrt", "pow", "erf", "erfc")}
        floor_, fmod = device(floor), math.fmod
    return (_shim("math", **library),
            _shim("np", floor=floor_, fmod=fmod, nan=np.nan, inf=np.inf, pi=np.pi,
                  float32=np.float32, float64=np.float64))


def device_helpers(device, floor, simulated):
    """{helper name: device function} for every public helper of the CPU module, given
    the device decorator and a device-safe floor (inf and NaN kept)."""
    from ..numba_cpu.kernels import special_math as source
    math_, np_ = _libraries(simulated, device, floor)
    namespace = dict(vars(source), math=math_, np=np_)
    helpers = {}
    for name, value in vars(source).items():
        function = getattr(value, "py_func", None)
        if function is None or function.__module__ != source.__name__:
            continue
        rebuilt = types.FunctionType(function.__code__, namespace, name,
                                     function.__defaults__, function.__closure__)
        namespace[name] = device(rebuilt)
        if not name.startswith("_"):
            helpers[name] = namespace[name]
    return helpers
