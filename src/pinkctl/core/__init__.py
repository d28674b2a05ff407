"""The base layer: state types, robots (description pipeline), joints and poses.

Nothing here imports a controller, the QP layer or the simulator.
"""
