"""Environment adapters behind one interface (reset/step, symbols, verbalizer, skills)."""
