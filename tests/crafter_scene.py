"""Test scenes in the real Crafter game: the ground round the player painted, creatures near it removed."""


def paint(world, half: tuple[int, int], ground, clear: int | None = None) -> tuple[int, int]:
    """Set every cell within `half` = (dx, dy) of the player to `ground(dx, dy)` (a material
    name, by offset from the player), remove every creature within `clear` cells (default: the
    painted square and 3 more), and let the player look; returns the player's cell."""
    env = world.env
    px, py = (int(v) for v in env.player.pos)
    reach = clear if clear is not None else max(half) + 3
    for obj in list(env.world.objects):
        if obj is not env.player and abs(int(obj.pos[0]) - px) <= reach and abs(int(obj.pos[1]) - py) <= reach:
            env.world.remove(obj)
    for dx in range(-half[0], half[0] + 1):
        for dy in range(-half[1], half[1] + 1):
            env.world[(px + dx, py + dy)] = ground(dx, dy)
    world.memory.observe(env.world, env.player.pos)
    return px, py
