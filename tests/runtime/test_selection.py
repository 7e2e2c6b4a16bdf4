"""Large toolsets: tool selection, per-run subsets, toolset filters.

The recall tests compile two real 174-operation specs from the corpus and ask their 50 questions
each through the default BM25 selector: Slack's Web API (``data/slack_questions.json``, the set
the selector was developed on) and Netlify's API (``data/netlify_questions.json``, a held-out set
written before the selector ran on that spec) — one question per operation, written from what
each operation is for. The Agent tests run against the scripted OpenAI-protocol server: what the
model is offered is read from the requests it received.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic import BaseModel

from tests.conftest import CORPUS, NO_CORPUS
from tests.scripted_llm import Reply, ScriptedLLM, call
from toolbind.compiler import compile_to_directory, load_package
from toolbind.runtime import Agent, ToolBinding, UsageError
from toolbind.runtime._selection import BM25Selector, tokens, toolset
from toolbind.runtime.capabilities import PendingDelivery, ToolSelection
from toolbind.runtime.pending import Pending, PendingStore

DATA = Path(__file__).parent / "data"
QUESTIONS: dict[str, Any] = json.loads((DATA / "slack_questions.json").read_text(encoding="utf-8"))
HELD_OUT: dict[str, Any] = json.loads((DATA / "netlify_questions.json").read_text(encoding="utf-8"))


def compiled(questions: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    spec = CORPUS / questions["spec"]
    if not spec.exists():
        pytest.skip(NO_CORPUS)
    out = tmp_path_factory.mktemp("spec")
    tree = compile_to_directory([spec], out)
    return load_package(out, next(iter(tree.packages)))


def _pending(call: Any) -> Pending:
    """An Activity whose result comes later."""
    return Pending()


@pytest.fixture(scope="module")
def slack(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return compiled(QUESTIONS, tmp_path_factory)


@pytest.fixture(scope="module")
def netlify(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return compiled(HELD_OUT, tmp_path_factory)


def answer(*calls: dict[str, Any], output: Any = None) -> Reply:
    return call({"calls": list(calls), "output": output})


def offered(request: dict[str, Any]) -> list[str]:
    """The tool names the composed function of one request offers (under its tag, first)."""
    params = request["tools"][0]["function"]["parameters"]
    items = params["properties"]["calls"]["items"]
    return [s["properties"][s["required"][0]]["const"] for s in items.get("anyOf", [items])]


# -- must-show 2: recall of the selector on two 174-operation specs -----------------------------


def recall(pkg: ModuleType, questions: dict[str, Any], k: int) -> tuple[float, list[str]]:
    selector = BM25Selector(k)
    tools: Sequence[ToolBinding] = pkg.TOOLS
    missed: list[str] = []
    for item in questions["questions"]:
        chosen = [t.name for t in selector.select(item["question"], tools)]
        assert len(chosen) == k
        if item["operation"] not in chosen:
            missed.append(item["operation"])
    return 1 - len(missed) / len(questions["questions"]), missed


@pytest.mark.parametrize("questions", [QUESTIONS, HELD_OUT], ids=["slack", "netlify"])
def test_the_questions_cover_50_operations_of_a_150_plus_operation_spec(
    questions: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    pkg: ModuleType = request.getfixturevalue("slack" if questions is QUESTIONS else "netlify")
    names = {t.name for t in pkg.TOOLS}
    asked = [q["operation"] for q in questions["questions"]]
    assert len(names) >= 150
    assert len(asked) == len(set(asked)) == 50
    assert set(asked) <= names


def test_bm25_recall_on_slack(slack: ModuleType) -> None:
    # measured (bench/selection.py): 0.84 at k=5, 0.98 at 10 and 20 (main's BM25 before the
    # vocabulary work: 0.78, 0.84, 0.90); the target is 0.95 at k=10
    at_10, missed = recall(slack, QUESTIONS, 10)
    assert at_10 >= 0.98, missed


def test_bm25_recall_on_the_held_out_netlify_set(netlify: ModuleType) -> None:
    # measured (bench/selection.py): 0.80 at k=5, 0.86 at 10, 0.94 at 20 (before: 0.68, 0.76,
    # 0.82); questions written before the selector ran on this spec, never edited to suit it
    at_10, missed = recall(netlify, HELD_OUT, 10)
    assert at_10 >= 0.86, missed
    at_20, missed = recall(netlify, HELD_OUT, 20)
    assert at_20 >= 0.94, missed


def test_tokens_split_identifiers_and_stem() -> None:
    assert tokens("conversations_setTopic") == ["convers", "set", "topic"]
    assert tokens("admin.usergroups.listChannels") == ["admin", "usergroup", "list", "channel"]
    assert tokens("Pinned messages") == tokens("pin a message") == ["pin", "messag"]
    assert tokens("scheduled") == tokens("schedules") == ["schedul"]
    assert tokens("reminders") == tokens("Remind me") == ["remind"]  # Snowball, not a suffix list
    assert tokens("the message I sent") == ["messag", "send"]  # irregular past forms


def tool(name: str, description: str = "", **params: str) -> ToolBinding:
    """A tool of a made-up API: a name, a description, parameters with descriptions."""
    props = {p: {"type": "string", "description": d} for p, d in params.items()}
    schema = {"type": "object", "properties": props}
    return ToolBinding(
        name=name,
        provider_name=name,
        models=(BaseModel, BaseModel),
        parameters=schema,
        defs={},
        description=description,
    )


ROOMS = [
    tool("rooms_update", "Updates a room.", room="The room", title="New title"),
    tool("rooms_create", "Creates a room.", title="The title"),
    tool("rooms_invite", "Invites users to a room.", room="The room", users="User IDs"),
    tool("rooms_kick", "Removes a user from a room.", room="The room", user="A user ID"),
    tool("rooms_list", "Lists rooms.", cursor="Paging cursor"),
    tool("rooms_history", "Fetches a room's history of messages.", room="The room"),
    tool("messages_send", "Sends a message to a room.", room="The room", text="Text to post"),
    tool("messages_getPermalink", "Retrieve a permalink URL for a message.", ts="Its timestamp"),
    tool("users_setPhoto", "Set the user profile photo.", image="The image"),
    tool("users_list", "Lists all users in a workspace.", cursor="Paging cursor"),
]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # a verb class meets the API's verb: edit/change are update, add is invite/create
        ("Edit the title of the #ops room", "rooms_update"),
        ("Add the users Bob and Carol to the #design room", "rooms_invite"),
        # a specific verb keeps its word: kick beats the other deletes
        ("Kick Dave out of #finance", "rooms_kick"),
        # a noun class: a picture is a photo, a link is a permalink
        ("Use this picture for my profile", "users_setPhoto"),
        ("Give me a link to the message 1234.5678", "messages_getPermalink"),
        # values (quoted text, #names, @names) don't pick the tool
        ("Post 'please list the rooms' in #users", "messages_send"),
    ],
)
def test_the_selector_meets_how_users_ask(question: str, expected: str) -> None:
    ranked = [t.name for t, _ in BM25Selector(1).rank(question, ROOMS)]
    assert ranked[0] == expected, ranked[:3]


def test_what_a_question_is_searched_as() -> None:
    selector = BM25Selector(1)
    # a generic verb by its class, a specific one with it; values left out
    assert selector.query_terms("Edit the topic of #ops: 'on call'", ROOMS) == ["~update", "topic"]
    assert selector.query_terms("Kick @dave", ROOMS) == ["kick", "~delete"]
    assert {"bob", "messag"} <= set(selector.query_terms("Don't show Bob's messages", ROOMS))
    # "posted" is no request to post: a past form describes, the question asks to read
    assert selector.query_terms("What messages were posted?", ROOMS) == ["~read", "messag", "post"]
    assert selector.query_terms("Post a message", ROOMS) == ["~send", "messag"]
    # a word the tools never use joins those it begins or ends
    assert selector.query_terms("a link", ROOMS) == ["link", "~link", "permalink", "~link"]


def test_a_question_with_no_known_word_keeps_the_tools_order() -> None:
    assert [t.name for t in BM25Selector(3).select("?? !!", ROOMS)] == [
        "rooms_update",
        "rooms_create",
        "rooms_invite",
    ]


# -- the Agent ----------------------------------------------------------------------------------


def test_agent_offers_the_k_selected_tools_and_runs_the_call(
    slack: ModuleType, llm: tuple[ScriptedLLM, str]
) -> None:
    server, url = llm
    server.add(answer({"_tool": "conversations_setTopic", "channel": "C1", "topic": "on-call"}))
    agent = Agent(url, model="m", tools=slack.TOOLS, activities={}, capabilities=[ToolSelection(5)])
    response = agent.request("Change the topic of #ops to 'on-call: Maria'")
    assert [c.tool for c in response.calls] == ["conversations_setTopic"]
    sent = offered(server.requests[0])
    assert len(sent) == 5 and "conversations_setTopic" in sent
    assert agent.last_step is not None and agent.last_step.offered == sent
    everything = len(json.dumps(agent.composition()))
    assert len(json.dumps(server.requests[0]["tools"])) < everything / 10


def test_a_tool_not_offered_this_step_is_fed_back_not_a_crash(
    slack: ModuleType, llm: tuple[ScriptedLLM, str]
) -> None:
    server, url = llm
    server.add(
        # a real tool of the package, but not among the ones selected for this question
        answer({"_tool": "admin_emoji_add", "name": "x", "url": "u", "token": "t"}),
        answer({"_tool": "users_setPresence", "presence": "away", "token": "t"}),
    )
    agent = Agent(url, model="m", tools=slack.TOOLS, activities={}, capabilities=[ToolSelection(3)])
    response = agent.request("Set my presence to away")
    assert [c.tool for c in response.calls] == ["users_setPresence"]
    assert "admin_emoji_add" not in offered(server.requests[0])
    feedback = server.tool_messages(1)[-1]["content"]
    assert "admin_emoji_add" in feedback and "users_setPresence" in feedback


def test_a_tool_named_by_tool_choice_is_always_offered(
    slack: ModuleType, llm: tuple[ScriptedLLM, str]
) -> None:
    server, url = llm
    server.add(answer({"_tool": "api_test"}))
    agent = Agent(url, model="m", tools=slack.TOOLS, activities={}, capabilities=[ToolSelection(3)])
    agent.request("Set my presence to away", tool_choice="api_test")
    assert offered(server.requests[0]) == ["api_test"]


def test_per_run_subset_and_selector_protocol(
    slack: ModuleType, llm: tuple[ScriptedLLM, str]
) -> None:
    seen: list[tuple[str, int]] = []

    class Router:
        """A selector of one's own (an LLM router, embeddings): async is fine."""

        async def select(self, query: str, tools: Sequence[ToolBinding]) -> list[ToolBinding]:
            seen.append((query, len(tools)))
            return [t for t in tools if t.name.endswith("_list")][:2]

    server, url = llm
    server.add(
        answer({"_tool": "pins_list", "channel": "C1", "token": "t"}),
        answer(output="done"),
    )
    agent = Agent(url, model="m", tools=slack.TOOLS, capabilities=[ToolSelection(Router())])
    subset = ["pins_list", "pins_add", "stars_list", "users_info"]
    result = agent.run("What is pinned in #general?", tools=subset, max_steps=2)
    assert result.output == "done"
    assert seen == [("What is pinned in #general?", 4)] * 2
    assert result.steps[0].offered == ["pins_list", "stars_list"]
    assert offered(server.requests[1]) == ["pins_list", "stars_list"]
    with pytest.raises(UsageError, match="no such tool"):
        agent.request("x", tools=["nope"])


def test_toolset_filters_by_tag_pattern_and_prefix(
    slack: ModuleType, llm: tuple[ScriptedLLM, str]
) -> None:
    chat = toolset(slack, tags=["chat"])
    assert chat and all("chat" in t.toolsets for t in chat)
    assert {t.name for t in toolset(slack, names=["pins_*"])} == {
        "pins_add",
        "pins_list",
        "pins_remove",
    }
    assert [t.name for t in toolset(slack, names=["pins_*"], exclude=["*_remove"])] == [
        "pins_add",
        "pins_list",
    ]
    with pytest.raises(UsageError, match="keeps none"):
        toolset(slack, tags=["no-such-tag"])
    prefixed = toolset(slack, names=["pins_*"], prefix="slack_")
    server, url = llm
    server.add(answer({"_tool": "slack_pins_list", "channel": "C1", "token": "t"}))
    agent = Agent(url, model="m", tools=prefixed, activities={})
    response = agent.request("What is pinned in #general?")
    # the model reads the prefixed names; the call is the tool's own
    assert offered(server.requests[0]) == ["slack_pins_add", "slack_pins_list", "slack_pins_remove"]
    assert [c.tool for c in response.calls] == ["pins_list"]


def test_tool_selection_is_checked() -> None:
    with pytest.raises(UsageError, match="ToolSelection"):
        Agent("http://127.0.0.1:9/v1", model="m", capabilities=[ToolSelection("bm25")])  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"BM25Selector\(k=0\)"):
        BM25Selector(0)


def test_the_selection_query_is_the_users_request_not_toolbinds_own_messages(
    slack: ModuleType, llm: tuple[ScriptedLLM, str], tmp_path: Path
) -> None:
    """The context toolbind shows the model, and a delivered result on a resumed run, are user
    messages toolbind wrote: the tools are selected for the request the user made."""
    server, url = llm
    seen: list[str] = []

    class Seen(BM25Selector):
        def select(self, query: str, tools: Sequence[ToolBinding]) -> list[ToolBinding]:
            seen.append(query)
            return super().select(query, tools)

    request = "Change the topic of #ops to 'on-call: Maria'"
    topic = {"_tool": "conversations_setTopic", "channel": "C1", "topic": "on-call: Maria"}
    server.add(answer(topic, output="done"))
    agent = Agent(
        url, model="m", tools=slack.TOOLS, activities={}, capabilities=[ToolSelection(Seen(5))]
    )
    context = [{"type": "data", "user": {"name": "Maria", "timezone": "UTC", "profile": "admin"}}]
    result = agent.run(request, context=context, max_steps=1)
    assert seen == [request]
    assert "conversations_setTopic" in offered(server.requests[0])
    assert len(server.requests) == 1 and result.output == "done"  # the call was not refused

    # resumed: the delivered result is not the query either
    with PendingStore(tmp_path / "pending.sqlite3", ttl=60) as store:
        pins = {"_tool": "pins_list", "channel": "C1", "token": "t"}
        server.add(answer(pins), answer(output="waiting"), answer(output="pinned: one"))
        agent = Agent(
            url,
            model="m",
            tools=slack.TOOLS,
            activities={"pins_list": _pending},
            capabilities=[ToolSelection(Seen(5)), PendingDelivery(store)],
        )
        seen.clear()
        first = agent.run("What is pinned in #general?")
        store.submit(first.run_id, first.steps[0].calls[0].call_id, {"items": ["one"]})
        second = agent.run(first.messages, run_id=first.run_id)
    assert second.output == "pinned: one"
    assert seen == ["What is pinned in #general?"] * 3
