"""polyred's errors as Python exceptions, one class per C API status."""


class Error(Exception):
    """A polyred failure; `status` is the C API's status code."""
    status = 3


class BadInputError(Error, ValueError):
    """Malformed or out-of-scope graph, or arguments that do not fit the kernel."""
    status = 2


class MismatchError(Error):
    """A check found results that differ from the reference."""
    status = 1


class NoGpuError(Error, RuntimeError):
    """No usable GPU (the message says why)."""
    status = 4


class InternalError(Error, RuntimeError):
    """A polyred bug."""
    status = 3


_BY_STATUS = {1: MismatchError, 2: BadInputError, 3: InternalError, 4: NoGpuError}


def raise_for(status, message):
    if status != 0:
        raise _BY_STATUS.get(status, InternalError)(message)
