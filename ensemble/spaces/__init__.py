"""The spaces groups and trees split: PLS, additive and kernel scores, the monotone index and the rank map.

Also how one feature's move inside a gap of its training values is seen in such a space
(docs/design.md section 13). Shared by OTreeBagger's groups and the certified forest's
trees; it imports ``certificates`` and ``base`` only.
"""
