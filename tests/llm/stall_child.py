"""Child of test_llm_limits' stall tests: streams one reply from the URL it is given and
prints `FIRST` after the first chunk, then the final chunk as JSON, so the parent can stop
this process (SIGSTOP) at the moment it chooses and judge what the reply became."""

from __future__ import annotations

import asyncio
import json
import sys

from dsh_tui.llm.deepseek import DeepSeekProvider


async def main(url: str, timeout: float) -> None:
    provider = DeepSeekProvider(api_key="sk-test", base_url=url, read_timeout=timeout,
                                first_byte_timeout=timeout)
    chunks = []
    try:
        async for chunk in provider.stream({"model": "deepseek-flash", "messages": [
                {"id": "u1", "role": "user", "content": [{"type": "text", "text": "hi"}],
                 "source": {"kind": "user"}}]}):
            chunks.append(chunk)
            if len(chunks) == 1:
                print("FIRST", flush=True)
    finally:
        await provider.aclose()
    text = "".join(c.get("text", "") for c in chunks if c["type"] == "text-delta")
    print(json.dumps({"finish": chunks[-1], "text": text}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], float(sys.argv[2])))
