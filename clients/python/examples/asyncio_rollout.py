"""A plain asyncio rollout: many episodes at once, each a loop of "model writes code → the fleet
runs it → the output goes back into the context", rewarded at the end.

The policy here is a stand-in (it writes a fixed program per turn); put your inference call in
``generate``. Tool calls of all episodes are batched by the client; a fleet fault (``overloaded``,
``queue_timeout``, ``infra_error`` left after the client's retries) marks the episode so the
trainer can drop it rather than penalise the model.

    python3 examples/asyncio_rollout.py --url http://127.0.0.1:8080 --episodes 32
"""
from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass, field

from sandfleet import AsyncClient


@dataclass
class Episode:
    prompt: str
    answer: int
    context: list[str] = field(default_factory=list)
    fleet_fault: bool = False
    reward: float = 0.0


async def generate(context: list[str], turn: int, episode: Episode) -> str:
    """Stand-in for the policy: turn 0 computes, turn 1 prints the answer it computed."""
    n = int(episode.prompt.split('..')[-1])
    return f'total = sum(range({n + 1}))' if turn == 0 else 'print(total)'


async def rollout(client: AsyncClient, episode: Episode, max_turns: int = 2) -> Episode:
    async with client.session() as session:  # the episode's Python state lives across its turns
        for turn in range(max_turns):
            code = await generate(episode.context, turn, episode)
            result = await session.execute(code, timeout_ms=5000)
            if result.retriable:
                episode.fleet_fault = True
                return episode
            episode.context += [code, result.stdout + result.stderr]
    episode.reward = 1.0 if episode.context[-1].strip() == str(episode.answer) else 0.0
    return episode


async def main(url: str, episodes: int) -> int:
    async with AsyncClient(url) as client:
        batch = [Episode(prompt=f'sum of 0..{n}', answer=n * (n + 1) // 2) for n in range(episodes)]
        done = await asyncio.gather(*(rollout(client, e) for e in batch))
    scored = [e for e in done if not e.fleet_fault]
    accuracy = sum(e.reward for e in scored) / max(1, len(scored))
    print(
        f'{len(scored)}/{len(done)} episodes scored, accuracy {accuracy:.3f}, '
        f'{len(done) - len(scored)} dropped for fleet faults'
    )
    return 0 if accuracy == 1.0 else 1


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--url', default='http://127.0.0.1:8080')
    parser.add_argument('--episodes', type=int, default=32)
    args = parser.parse_args()
    sys.exit(asyncio.run(main(args.url, args.episodes)))
