"""The global symbols a 64-bit little-endian ELF object file defines and the ones it
needs, read from its symbol table.

LLVM's loader stops the process when machine code names a symbol it cannot resolve, so
a kernel loaded without Numba (native_loader.py) is checked against these lists first.
"""

import struct

_MACHINES = {"x86_64": 62, "aarch64": 183}  # e_machine
_SYMTAB = 2
_UNDEFINED = 0
_GLOBAL, _WEAK = 1, 2


class NotReadable(ValueError):
    """Not a 64-bit little-endian ELF relocatable object for this machine."""


def symbols(data, machine):
    """({defined global names}, {needed global names}) of the object file `data` (bytes)
    built for `machine` (platform.machine()); weak references are not needed.

    Raises:
      NotReadable: another format or machine, or a damaged table.
    """
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise NotReadable("not a 64-bit little-endian ELF file")
    try:
        e_machine, = struct.unpack_from("<H", data, 18)
        if e_machine != _MACHINES.get(machine):
            raise NotReadable(f"built for machine {e_machine}, not {machine}")
        e_shoff, = struct.unpack_from("<Q", data, 40)
        e_shentsize, e_shnum = struct.unpack_from("<HH", data, 58)
        sections = [struct.unpack_from("<IIQQQQIIQQ", data, e_shoff + i * e_shentsize)
                    for i in range(e_shnum)]
        defined, needed = set(), set()
        for _, kind, _, _, offset, size, link, _, _, entry_size in sections:
            if kind != _SYMTAB:
                continue
            strings_offset, strings_size = sections[link][4], sections[link][5]
            for start in range(offset + entry_size, offset + size, entry_size):  # 0: null
                name_at, info, _, section = struct.unpack_from("<IBBH", data, start)
                binding = info >> 4
                if binding not in (_GLOBAL, _WEAK) or not name_at:
                    continue
                if name_at >= strings_size:
                    raise NotReadable("a symbol's name is outside its string table")
                end = data.index(b"\0", strings_offset + name_at)
                name = data[strings_offset + name_at:end].decode()
                if section != _UNDEFINED:  # in a section of its own, or common
                    defined.add(name)
                elif binding == _GLOBAL:
                    needed.add(name)
        return defined, needed
    except (struct.error, IndexError, ValueError, UnicodeDecodeError) as e:
        if isinstance(e, NotReadable):
            raise
        raise NotReadable(f"damaged: {e}") from None
