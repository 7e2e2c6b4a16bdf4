"""Test support (docs): the scripted model's answers for the docs' blocks marked ``llm: NAME``.
Imports ``tests.scripted_llm``.

A hosted or local model cannot be relied on to say the same thing twice; a page shows what the
scripted server's answers make the block print, and says so.
"""

from __future__ import annotations

from tests.scripted_llm import Reply, call

LLM_SCRIPTS: dict[str, tuple[Reply, ...]] = {
    # Get started: one call of greetUser, its result fed back, then the output
    "get-started": (
        call({"calls": [{"_tool": "greetUser", "userName": "Bo"}], "output": None}),
        call({"calls": [], "output": "I greeted Bo."}),
    ),
    # the Agent loop reference: one request (named tool), then a run with one call and an output
    "runtime": (
        call({"calls": [{"_tool": "greetUser", "userName": "Ann"}], "output": None}),
        call({"calls": [{"_tool": "greetUser", "userName": "Bo"}], "output": None}),
        call({"calls": [], "output": "I greeted Bo."}),
    ),
    # the streaming guide: the output, streamed in deltas
    "streaming": (call({"calls": [], "output": "Hello, world."}),),
    # the MCP guide: an Agent over the time server's tools, answered at once
    "mcp-agent": (call({"calls": [], "output": "It is noon in Tokyo."}),),
    # the context guide: a dynamic _outputPath and a reference, then the output
    "context": (
        call(
            {
                "calls": [
                    {
                        "_tool": "setStatus",
                        "user": "†data.user.name",
                        "status": "inactive",
                        "_outputPath": "†data.user.status",
                    }
                ],
                "output": None,
            }
        ),
        call({"calls": [], "output": "done"}),
    ),
    # approval: one call parked, an answer meanwhile, then the resumed run
    "approval": (
        call({"calls": [{"_tool": "transfer", "amount": 50}], "output": None}),
        call({"calls": [], "output": "Waiting for approval."}),
        call({"calls": [], "output": "Sent 20."}),
    ),
    # delegates: a delegated call and a refund its guardrail rejects (no request), the
    # summarizer's sub-request, then the output
    "delegates": (
        call(
            {
                "calls": [{"_tool": "summarize", "words": 10}, {"_tool": "refund", "amount": 500}],
                "output": None,
            }
        ),
        call({"calls": [], "output": {"summary": "A short summary."}}),
        call({"calls": [], "output": "done"}),
    ),
}
