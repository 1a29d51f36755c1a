"""Measure the embedded local chat model: load time, prompt/generation speed,
prompt-prefix caching and parallel decoding of several samples.

    python bench/embedded_model.py [--out FILE]   # default: bench/results/embedded_model.json
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import httpx
from _results import add_output_args, result_path, save_json

from tablerag_agents.config import Settings
from tablerag_agents.models.gguf import ensure_gguf
from tablerag_agents.models.server import ALIAS, ServerParams, get_server

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "embedded_model.json"

PREFIX = "You are a careful data analyst. The table below lists football seasons.\n" + "\n".join(
    f"| {1990 + i} | Division {i % 4 + 1} | {['1st', '2nd', '5th', '9th'][i % 4]} "
    f"| {['Final', 'Semifinal', 'Round 1', 'Champion'][i % 4]} |"
    for i in range(40)
)


API_KEY = ""
"""The embedded server's per-process key (set in main)."""


def chat(
    url: str, content: str, max_tokens: int, seed: int = 0, temp: float = 0.0, n: int = 1
) -> dict:
    """Send one chat completion straight to the server (to read its timings)."""
    body = {
        "model": ALIAS,
        "messages": [{"role": "user", "content": content}],
        "max_tokens": max_tokens,
        "temperature": temp,
        "seed": seed,
        "n": n,
    }
    started = time.perf_counter()
    headers = {"Authorization": f"Bearer {API_KEY}"}
    resp = httpx.post(f"{url}/v1/chat/completions", json=body, headers=headers, timeout=600)
    resp.raise_for_status()
    data = resp.json()
    data["wall_s"] = time.perf_counter() - started
    return data


def main() -> None:
    """Run the measurements and save JSON."""
    ap = argparse.ArgumentParser(description=__doc__)
    add_output_args(ap, DEFAULT_OUT)
    ap.add_argument("--samples", type=int, default=4, help="parallel samples to decode")
    args = ap.parse_args()
    out = result_path(DEFAULT_OUT, args.out, force=args.force)
    settings = Settings()

    started = time.perf_counter()
    path = ensure_gguf(Path(settings.cache_dir) / "models")
    assemble_s = time.perf_counter() - started
    params = ServerParams(path, settings.n_ctx, settings.n_parallel, settings.n_threads)
    started = time.perf_counter()
    server = get_server(params)
    load_s = time.perf_counter() - started
    url = server.address
    global API_KEY
    API_KEY = server.api_key

    # Prompt and generation speed, from the server's own timings.
    q = "\n\nQuestion: in which year did the team first reach the Final? Think step by step."
    first = chat(url, PREFIX + q, max_tokens=128)
    t = first["timings"]
    # The same prefix with a new question: only the new tokens are processed.
    q2 = "\n\nQuestion: how many seasons were in Division 2? Think step by step."
    cold_other = chat(url, PREFIX.replace("football", "hockey") + q2, max_tokens=1)
    warm_same = chat(url, PREFIX + q2, max_tokens=1)

    # Self-consistency samples: n sequential requests (the prefix cache already
    # spares them the prompt) vs one request with n choices decoded together.
    n = args.samples
    prompt = PREFIX + "\n\nQuestion: name one season where they were Champion."
    chat(url, prompt, max_tokens=1)  # both variants start with the prompt cached
    started = time.perf_counter()
    for i in range(n):
        chat(url, prompt, max_tokens=48, seed=i, temp=0.7)
    seq_s = time.perf_counter() - started
    started = time.perf_counter()
    together = chat(url, prompt, max_tokens=48, seed=100, temp=0.7, n=n)
    par_s = time.perf_counter() - started
    assert len(together["choices"]) == n, together

    result = {
        "load_avg_1m_at_end": round(os.getloadavg()[0], 2),  # the machine is shared
        "model": ALIAS,
        "n_parallel": params.n_parallel,
        "n_ctx_per_slot": params.n_ctx_per_slot,
        "threads": params.threads,
        "assemble_or_verify_s": round(assemble_s, 2),
        "load_s": round(load_s, 2),
        "prompt_tokens": t["prompt_n"],
        "prompt_tok_per_s": round(t["prompt_per_second"], 1),
        "gen_tokens": t["predicted_n"],
        "gen_tok_per_s": round(t["predicted_per_second"], 1),
        "prefix_cache": {
            "new_prefix_prompt_ms": round(cold_other["timings"]["prompt_ms"], 1),
            "new_prefix_tokens_processed": cold_other["timings"]["prompt_n"],
            "cached_prefix_prompt_ms": round(warm_same["timings"]["prompt_ms"], 1),
            "cached_prefix_tokens_processed": warm_same["timings"]["prompt_n"],
            "cached_tokens_reused": warm_same["timings"].get("cache_n"),
        },
        "samples": n,
        "sequential_samples_s": round(seq_s, 2),
        "n_choices_one_request_s": round(par_s, 2),
        "parallel_speedup": round(seq_s / par_s, 2),
    }
    print(json.dumps(result, indent=2))
    save_json(out, result)
    print(f"saved {out}")


if __name__ == "__main__":
    main()
