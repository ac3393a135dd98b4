"""Memory components that need no storage: the sensory buffer, working memory, and pure maths.

Modules here take explicit parameters (budgets, capacities, clocks), never a configuration
object and never a store; the engine wires them to ``UCMAConfig``. Import the modules directly
(``from ucma.memory.retention import retention``); this package imports nothing on purpose.
"""
