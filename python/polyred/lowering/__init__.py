"""Lowering: PyTorch programs to polyred graphs. trace.py (polyred.compile) lowers torch
functions traced with torch.fx; aten.py and region.py lower regions of the aten graphs
that AOTAutograd gives the torch.compile backend. Above the binding (builder, kernel),
below the backend."""
