"""CEDAR (seed 000): skills as DFAs learned actively, a noisy teacher answering membership
queries and the environment answering equivalence queries; a library of learned skills."""
