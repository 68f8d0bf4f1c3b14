"""Drive hermes-core's memory lifecycle from your own agent loop — no ``hermes-memory chat``.

Any framework that can make OpenAI-style chat calls can do what this file does: open a
session, put its frozen system prompt and tools in front of the model, call
``before_turn`` / ``call_tool`` / ``after_turn`` around each turn, and let the host compress
the transcript when it grows. Memory, the session archive, skills and the background review
all keep working.

Run it against any OpenAI-compatible endpoint::

    python examples/custom_loop.py --base-url http://127.0.0.1:11434/v1 --model llama3.1 \\
        "Remember that I prefer short answers." "What do you know about me?"
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hermes_core import MemoryHost
from hermes_core.layers.review import attach_review
from hermes_core.llm.client import LLMClient

MAX_TOOL_ROUNDS = 8


def run_conversation(
    prompts: Sequence[str],
    *,
    base_url: str,
    model: str,
    home: Path | None = None,
    api_key: str | None = None,
) -> list[str]:
    """Run ``prompts`` as one session; return the replies."""
    replies: list[str] = []
    client = LLMClient(base_url, api_key, model)
    with MemoryHost.open(home) as host, host.session(source="my-bot", model=model) as session:
        # 1. The frozen parts: your own identity first, then the memory layers' blocks.
        system = "You are MyBot, a friendly assistant.\n\n" + session.system_prompt()
        tools = session.tool_schemas()
        history: list[dict[str, Any]] = []

        # 2. Optional: automatic background reviews (memory / skills) after replies.
        #    The review model defaults to llm.auxiliary.review / llm from the settings;
        #    here it is the same endpoint as the conversation.
        review = attach_review(
            session,
            system_prompt=system,
            conversation=lambda: list(history),
            client_factory=lambda: LLMClient(base_url, api_key, model),
            notify=print,
        )

        for text in prompts:
            # 3. Start the turn: recall goes on the API copy of the user message only.
            block = session.before_turn(text)
            api_user = {"role": "user", "content": f"{text}\n\n{block}" if block else text}
            turn: list[dict[str, Any]] = [{"role": "user", "content": text}]
            rounds, prompt_tokens = 0, None
            while True:
                messages = [{"role": "system", "content": system}, *history, api_user, *turn[1:]]
                result = client.chat(messages, tools=tools if rounds < MAX_TOOL_ROUNDS else None)
                prompt_tokens = result.usage.prompt_tokens if result.usage else prompt_tokens
                if not result.tool_calls:
                    turn.append({"role": "assistant", "content": result.content or ""})
                    break
                # 4. Tools: every memory-system tool is routed by the session.
                turn.append(result.message())
                rounds += 1
                for call in result.tool_calls:
                    output = session.call_tool(
                        call["function"]["name"], call["function"]["arguments"]
                    )
                    turn.append({"role": "tool", "tool_call_id": call["id"], "content": output})
            reply = str(turn[-1]["content"])
            replies.append(reply)
            history.extend(turn)
            # 5. Finish the turn: persist, sync the provider, nudges and review.
            session.after_turn(
                text, reply, turn, tool_iterations=rounds, prompt_tokens=prompt_tokens
            )
            # 6. Compress when the API-reported prompt size crosses the threshold.
            compressed = session.maybe_compress(
                [{"role": "system", "content": system}, *history], prompt_tokens=prompt_tokens
            )
            history = [m for m in compressed if m.get("role") != "system"]
        if review is not None:
            review.wait_idle(30)  # let a review that is running finish before closing
    client.close()
    return replies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prompts", nargs="+")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--api-key", default=None)
    args = parser.parse_args()
    for reply in run_conversation(
        args.prompts, base_url=args.base_url, model=args.model, api_key=args.api_key
    ):
        print(reply)


if __name__ == "__main__":
    main()
