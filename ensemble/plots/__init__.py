"""Plots: decision regions of a 2D classifier, a fused partition region by region, jumps on a grid.

Drawn with matplotlib, imported only when used. It imports no other sub-package: a plot
reads a fitted model through its public methods.
"""
