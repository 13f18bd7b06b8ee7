import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU and torch with CUDA (skipped otherwise)")


def gpu_available():
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


@pytest.fixture
def torch_or_skip():
    return pytest.importorskip("torch")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    # ctest reports the GPU run as skipped (not passed) on this line.
    if config.getoption("-m") == "gpu" and not gpu_available():
        terminalreporter.write_line("polyred: no CUDA GPU for torch, every GPU test skipped")
