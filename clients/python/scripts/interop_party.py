"""A Python party for the cross-language scenarios (test/python-*.test.ts), one JSON object per stdout line.

interop_party.py --nats URL --prefix P [--creds FILE] agent --name NAME [--label L] [--delay S] [--creds-path F]
        [--api-key K]
    attaches the agent NAME (registering it the first time) and answers every text of someone else when it is
    its turn, with the text "<L>:<text>" under the deterministic reply id, after `delay` seconds.
    Prints {"event": "ready", "agent_id"} once consuming, then {"event": "answered", ...} per answer. Runs until
    stdin closes.
interop_party.py --nats URL --prefix P [--creds FILE] consult --name NAME --target T --text X [--creds-path F]
        [--api-key K]
    as the person NAME, opens a consulting channel with T, asks X, prints {"event": "answer", ...} and exits.
interop_party.py --nats URL --prefix P converse --name NAME --target T --text X --spread K
    as the person NAME, learns the deployment's partition count from the hub and prints {"event": "partitions",
    "count"}; then opens conversation channels with T until they cover K partitions (all of them when there are
    fewer), asks "X <i>" in the i-th and waits for its answer, printing {"event": "answer", "channel_id", "partition",
    "question", "text", "reply_id", "causation_id"} per channel; last {"event": "done", "agent_id", "texts"}, with
    every text of someone else delivered in those channels (channel id to texts, a duplicate delivery listed twice);
    exits.
interop_party.py --nats URL --prefix P readme-agent --name NAME
    attaches the agent NAME with the handler of clients/python/README.md's quick start, as written there; prints
    {"event": "ready", "agent_id"}, then {"event": "refused", "code", "message", "trigger"} for every hub error its
    handler raised. Runs until stdin closes.

`--creds` is the connection's `.creds` file (on a secured deployment, the registrant's); `--creds-path` where the
identity's issued credentials are kept (and found again by the next attach); `--api-key` its admission credential.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import sys
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

from ag2net import EV_TEXT, AgentClient, Envelope, HubClient, NetworkError, ack_invite, is_invite_for
from ag2net.partitions import partition_of

README = Path(__file__).resolve().parents[1] / "README.md"


def emit(**fields: object) -> None:
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


class EmitLogs(logging.Handler):
    """The client's log records as {"event": "log", "level", "msg"} lines, so a test can wait for one."""

    def emit(self, record: logging.LogRecord) -> None:
        emit(event="log", level=record.levelname, msg=record.getMessage())


def passport_of(name: str, api_key: str | None) -> dict[str, object]:
    """The passport of NAME, with an API key as its admission credential (AG2's `AuthBlock`) when given."""
    if api_key is None:
        return {"name": name}
    return {"name": name, "auth": {"scheme": "api_key", "claim": {"token": api_key}}}


async def run_agent(
    hub: HubClient, name: str, label: str, delay: float, creds_path: str | None, api_key: str | None
) -> None:
    async def answer(envelope: Envelope, me: AgentClient) -> None:
        if is_invite_for(me, envelope):
            await ack_invite(me, envelope)
            return
        if envelope.event_type != EV_TEXT or envelope.sender_id == me.agent_id:
            return
        if not await me.is_my_turn(envelope):
            return
        await asyncio.sleep(delay)
        text = f"{label}:{envelope.event_data.get('text')}"
        reply_id = await me.reply(envelope, text)
        emit(event="answered", channel_id=envelope.channel_id, trigger=envelope.envelope_id, reply_id=reply_id)

    agent = await hub.attach(name, passport=passport_of(name, api_key), handler=answer, creds_path=creds_path)
    emit(event="ready", agent_id=agent.agent_id)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


def quick_start() -> dict[str, Any]:
    """The names the README's quick start defines before `main` (`echo`, `identity`, …), from its code as written."""
    code = re.search(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    if code is None:
        raise SystemExit(f"no python block in {README}")
    source = textwrap.dedent(code.group(1))
    namespace: dict[str, Any] = {"__name__": "quick_start"}
    exec(compile(source[: source.index("\nasync def main")], f"{README} (quick start)", "exec"), namespace)
    return namespace


async def run_readme_agent(hub: HubClient, name: str) -> None:
    defined = quick_start()
    echo = cast(Callable[[Envelope, AgentClient], Awaitable[None]], defined["echo"])
    identity = cast(Callable[[str], dict[str, Any]], defined["identity"])

    async def handler(envelope: Envelope, me: AgentClient) -> None:
        try:
            await echo(envelope, me)
        except NetworkError as err:
            emit(event="refused", code=err.code, message=err.message, trigger=envelope.envelope_id)
            raise

    agent = await hub.attach(name, handler=handler, **identity(name))
    emit(event="ready", agent_id=agent.agent_id)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


async def run_ag2_agent(hub: HubClient, name: str, answer: str) -> None:
    from ag2 import Agent
    from ag2.testing import TestConfig

    from ag2net.ag2_compat import serve_ag2_agent

    client = await serve_ag2_agent(hub, Agent(name, config=TestConfig(answer)))
    emit(event="ready", agent_id=client.agent_id)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


async def run_consult(
    hub: HubClient, name: str, target: str, text: str, creds_path: str | None, api_key: str | None
) -> None:
    me = await hub.attach_human(name, passport=passport_of(name, api_key), creds_path=creds_path)
    channel = await me.open("consulting", target)
    answer = me.next_envelope(
        lambda e: e.channel_id == channel.channel_id and e.event_type == EV_TEXT and e.sender_id != me.agent_id,
        timeout=30,
    )
    question = await channel.send(text)
    reply = await answer
    ended = await me.wait_for_channel_event(channel.channel_id, timeout=30)
    emit(
        event="answer",
        agent_id=me.agent_id,
        channel_id=channel.channel_id,
        question=question,
        text=reply.event_data.get("text") if reply is not None else None,
        reply_id=reply.envelope_id if reply is not None else None,
        causation_id=reply.causation_id if reply is not None else None,
        closed=ended.event_data.get("reason") if ended is not None else None,
    )


async def run_converse(hub: HubClient, name: str, target: str, text: str, spread: int) -> None:
    count = await hub.partitions()
    emit(event="partitions", count=count)
    me = await hub.attach_human(name)
    opened: list[str] = []
    heard = me.subscribe(lambda e: e.event_type == EV_TEXT and e.sender_id != me.agent_id)
    covered: set[int] = set()
    while len(covered) < min(spread, count):
        if len(opened) >= 64:
            raise SystemExit(f"64 channels covered only partitions {sorted(covered)}")
        channel = await me.open("conversation", target)
        opened.append(channel.channel_id)
        partition = partition_of(channel.channel_id, count)
        covered.add(partition)

        def answers(e: Envelope, channel_id: str = channel.channel_id) -> bool:
            return e.channel_id == channel_id and e.event_type == EV_TEXT and e.sender_id != me.agent_id

        answer = me.next_envelope(answers, timeout=30)
        question = await channel.send(f"{text} {len(opened)}")
        reply = await answer
        emit(
            event="answer",
            channel_id=channel.channel_id,
            partition=partition,
            question=question,
            text=reply.event_data.get("text") if reply is not None else None,
            reply_id=reply.envelope_id if reply is not None else None,
            causation_id=reply.causation_id if reply is not None else None,
        )
    texts: dict[str, list[object]] = {channel_id: [] for channel_id in opened}
    try:
        while (delivered := await heard.receive(timeout=1)) is not None:
            texts.setdefault(delivered.channel_id, []).append(delivered.event_data.get("text"))
    except TimeoutError:
        pass
    heard.close()
    emit(event="done", agent_id=me.agent_id, texts=texts)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nats", required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--creds")
    sub = parser.add_subparsers(dest="mode", required=True)
    agent = sub.add_parser("agent")
    agent.add_argument("--name", required=True)
    agent.add_argument("--label", default="py")
    agent.add_argument("--delay", type=float, default=0.0)
    agent.add_argument("--creds-path")
    agent.add_argument("--api-key")
    ag2_agent = sub.add_parser("ag2-agent")
    ag2_agent.add_argument("--name", required=True)
    ag2_agent.add_argument("--answer", required=True)
    readme_agent = sub.add_parser("readme-agent")
    readme_agent.add_argument("--name", required=True)
    consult = sub.add_parser("consult")
    consult.add_argument("--name", required=True)
    consult.add_argument("--target", required=True)
    consult.add_argument("--text", required=True)
    consult.add_argument("--creds-path")
    consult.add_argument("--api-key")
    converse = sub.add_parser("converse")
    converse.add_argument("--name", required=True)
    converse.add_argument("--target", required=True)
    converse.add_argument("--text", required=True)
    converse.add_argument("--spread", type=int, required=True)
    args = parser.parse_args()
    client_log = logging.getLogger("ag2net")
    client_log.setLevel(logging.DEBUG)
    client_log.addHandler(EmitLogs())
    async with await HubClient.connect(args.nats, prefix=args.prefix, creds=args.creds) as hub:
        if args.mode == "agent":
            await run_agent(hub, args.name, args.label, args.delay, args.creds_path, args.api_key)
        elif args.mode == "readme-agent":
            await run_readme_agent(hub, args.name)
        elif args.mode == "ag2-agent":
            await run_ag2_agent(hub, args.name, args.answer)
        elif args.mode == "converse":
            await run_converse(hub, args.name, args.target, args.text, args.spread)
        else:
            await run_consult(hub, args.name, args.target, args.text, args.creds_path, args.api_key)


if __name__ == "__main__":
    asyncio.run(main())
