"""The compression benchmark's scenarios: long coding, ops, research and chat sessions in
English and Chinese, written for this repository.

Facts are written the way people write them, not the way an extractor looks for them: in
prose, in words ("seven years", "二十万"), as names, places, preferences, reasons and
negations, inside tool output, restated or refined later. Around them sits what real
sessions are full of: polling loops of near-identical tool calls, logs full of numbers,
directory listings full of paths, "ok" / "continue" / "继续", small talk, and distractors
that look like facts (a wrong port tried first, a backup that must not be used, prices of
hotels not booked). Each scenario also carries the summary a good model would write, which
the LLM path of the benchmark gets back from the scripted fake server.
"""

from __future__ import annotations

from collections.abc import Callable

from hermes_core.bench.scenario_kit import (
    Scenario,
    ScenarioBuilder,
    listing,
    log_lines,
    page,
    pytest_output,
)

SYSTEM_EN = "You are Hermes, a careful assistant with tools. Be concise."
SYSTEM_ZH = "你是 Hermes，一个谨慎、简洁的助手，可以使用工具。"


def ops_db_migration_en() -> Scenario:
    b = ScenarioBuilder(
        "ops-db-migration-en", "en", "ops", "orders DB onto a new Postgres cluster", SYSTEM_EN
    )
    b.user("hey, morning").assistant("Morning! What are we working on today?")
    b.user(
        "We're moving the orders database off the old VM onto the new Postgres cluster this "
        "week. The new primary is pg-orders-02 and it only takes connections through "
        "pgbouncer on 6432, not the usual port."
    ).fact("goal", "moving the orders database", form="first substantive request").fact(
        "port", "6432", form="port in prose, with a negation"
    ).fact("host", "pg-orders-02", form="host name in prose")
    b.assistant("Got it. I'll check connectivity to the new primary first.")
    b.tool(
        "terminal",
        {"command": "pg_isready -h pg-orders-02 -p 5432"},
        "pg-orders-02:5432 - no response",
    ).distractor("5432", "the wrong port, tried first")
    b.poll(
        "terminal",
        [{"command": "pg_isready -h pg-orders-02 -p 6432"} for _ in range(24)],
        ["pg-orders-02:6432 - accepting connections" for _ in range(24)],
        acks=4,
    )
    names = [f"orders-2026-02-{d:02d}.dump" for d in range(10, 28)]
    b.tool(
        "terminal",
        {"command": "ls -la /var/backups/orders"},
        listing(b.rng, "/var/backups/orders", names),
    ).distractor("/var/backups/orders/orders-2026-02-27.dump", "the newest dump, unsafe")
    b.user(
        "Use Sunday night's dump, orders-2026-02-22.dump. The ones after it were taken while "
        "the nightly job was still writing, so they're not consistent."
    ).fact("dump", "orders-2026-02-22.dump", form="file name with a reason, no directory")
    restore_log = log_lines(b.rng, "pg_restore", 60, level_mix=False)
    b.tool(
        "terminal",
        {
            "command": "pg_restore -h pg-orders-02 -p 6432 -U migrator -d orders "
            "/var/backups/orders/orders-2026-02-22.dump"
        },
        restore_log + "\npg_restore: error: could not execute query: ERROR:  permission "
        "denied for schema audit (SQLSTATE 42501)\npg_restore: warning: errors ignored on "
        "restore: 1",
    ).fact("error", "42501", form="SQLSTATE inside a tool's error line")
    b.assistant(
        "The restore stopped on the audit schema: the migrator role has no USAGE on it. "
        "I won't grant anything without your go-ahead."
    )
    b.user("Grant it, but to migrator only — the app role stays read-only on audit.").fact(
        "grant", "app role stays read-only", form="constraint without a marker word"
    )
    b.tool(
        "terminal",
        {"command": "psql -h pg-orders-02 -p 6432 -c 'GRANT USAGE ON SCHEMA audit TO migrator'"},
        "GRANT",
    )
    b.chatter(3)
    b.tool(
        "terminal",
        {"command": "journalctl -u pgbouncer --since today"},
        log_lines(b.rng, "pgbouncer", 120),
    )
    b.assistant(
        "One thing to carry forward: audit rows have to be kept for seven years, so the old "
        "VM's audit tablespace can't be dropped until the copy is verified."
    ).fact("retention", "seven years", form="retention period in words, assistant text")
    b.poll(
        "terminal",
        [
            {"command": f"psql -p 6432 -c 'SELECT count(*) FROM orders_{y}'"}
            for y in range(2014, 2026)
        ],
        [f" count\n-------\n {b.rng.randint(900_000, 2_000_000)}\n(1 row)" for _ in range(12)],
        acks=3,
    )
    b.assistant("Per-year counts match the old VM for every table.")
    b.user("ok, continue")
    b.assistant("Both sides report 18,442,917 rows in orders in total.").fact(
        "rows", "18,442,917", form="a count in assistant text"
    )
    b.chatter(2)
    b.user("great, what's left before we can switch traffic?")
    b.assistant(
        "Verification of the audit copy, then repointing the app's connection string and a "
        "smoke test."
    )
    return b.build(
        "## Goal\n- Moving the orders database off the old VM onto the new Postgres cluster "
        "(primary pg-orders-02, pgbouncer port 6432 only).\n"
        "## Constraints & Preferences\n- Restore from orders-2026-02-22.dump (later dumps "
        "inconsistent).\n- USAGE on schema audit granted to migrator only; the app role "
        "stays read-only on audit.\n- Audit rows kept for seven years: keep the old audit "
        "tablespace until the copy is verified.\n"
        "## Completed Actions\n1. pg_restore — failed: permission denied for schema audit "
        "(SQLSTATE 42501); fixed with GRANT.\n2. Row counts compared: 18,442,917 rows on "
        "both sides.\n"
        "## Historical Remaining Work\n- Verify the audit copy, repoint the app, smoke test."
    )


def ops_db_migration_zh() -> Scenario:
    b = ScenarioBuilder(
        "ops-db-migration-zh", "zh", "ops", "订单库迁移到新的 Postgres 集群", SYSTEM_ZH
    )
    b.user("早上好").assistant("早上好！今天要做什么？")
    b.user(
        "这周要把会员库从旧机房的那台虚拟机迁到新的 Postgres 集群上。新主库叫 pg-huiyuan-03，"
        "只能走 pgbouncer 的 6543 端口连，默认端口是关着的。"
    ).fact("goal", "会员库", form="第一条实质请求").fact("port", "6543", form="口语里的端口").fact(
        "host", "pg-huiyuan-03", form="主机名"
    )
    b.assistant("明白，我先检查一下新主库的连通性。")
    b.tool(
        "terminal",
        {"command": "pg_isready -h pg-huiyuan-03 -p 5432"},
        "pg-huiyuan-03:5432 - no response",
    ).distractor("5432", "先试的错误端口")
    b.poll(
        "terminal",
        [{"command": "pg_isready -h pg-huiyuan-03 -p 6543"} for _ in range(20)],
        ["pg-huiyuan-03:6543 - accepting connections" for _ in range(20)],
        acks=4,
    )
    names = [f"members-2026-01-{d:02d}.dump" for d in range(5, 25)]
    b.tool(
        "terminal",
        {"command": "ls -la /data/backup/members"},
        listing(b.rng, "/data/backup/members", names),
    ).distractor("/data/backup/members/members-2026-01-24.dump", "最新的备份，不能用")
    b.user(
        "用上周日晚上那份 members-2026-01-18.dump，之后的几份是夜间任务没跑完时导的，不一致。"
    ).fact("dump", "members-2026-01-18.dump", form="只有文件名，带原因")
    b.tool(
        "terminal",
        {"command": "pg_restore -p 6543 -d members /data/backup/members/members-2026-01-18.dump"},
        log_lines(b.rng, "pg_restore", 60, level_mix=False)
        + "\npg_restore: error: could not execute query: ERROR:  duplicate key value violates "
        'unique constraint "member_phone_key" (SQLSTATE 23505)',
    ).fact("error", "23505", form="工具输出里的 SQLSTATE")
    b.assistant("恢复在 member_phone_key 唯一约束上失败了，旧库里有重复手机号。要我怎么处理？")
    b.user("重复的手机号先导出来给客服核对，别自己删，哪条都不能丢。").fact(
        "dupes", "给客服核对", form="没有标记词的约束"
    )
    b.chatter(3)
    b.tool(
        "terminal",
        {"command": "journalctl -u pgbouncer --since today"},
        log_lines(b.rng, "pgbouncer", 110),
    )
    b.assistant("记一下：积分流水要保留五年，旧库的流水表在核对完之前不能删。").fact(
        "retention", "五年", form="中文数字的保留期，助手说的"
    )
    b.poll(
        "terminal",
        [
            {"command": f"psql -p 6543 -c 'SELECT count(*) FROM points_{y}'"}
            for y in range(2015, 2026)
        ],
        [f" count\n-------\n {b.rng.randint(300_000, 900_000)}\n(1 row)" for _ in range(11)],
        acks=3,
    )
    b.user("继续")
    b.assistant("两边会员表的总行数都是 9,310,442 行。").fact(
        "rows", "9,310,442", form="助手说的行数"
    )
    b.chatter(2)
    b.user("好，切流量之前还差什么？")
    b.assistant("还差核对积分流水、改应用的连接串，然后做一次冒烟测试。")
    return b.build(
        "## Goal\n- 把会员库从旧虚拟机迁到新 Postgres 集群（主库 pg-huiyuan-03，只走 pgbouncer "
        "6543 端口）。\n## Constraints & Preferences\n- 用 members-2026-01-18.dump 恢复。\n"
        "- 重复手机号导出给客服核对，不能删。\n- 积分流水保留五年，核对前不删旧表。\n"
        "## Completed Actions\n1. pg_restore 失败：唯一约束冲突（SQLSTATE 23505）。\n"
        "2. 行数核对：两边都是 9,310,442 行。"
    )


def coding_refactor_en() -> Scenario:
    b = ScenarioBuilder(
        "coding-refactor-en", "en", "coding", "split a 1,400-line invoice module", SYSTEM_EN
    )
    b.user("hi there").assistant("Hi! What can I help with?")
    b.user(
        "Our billing/invoice.py has grown to 1,400 lines. Split it into a package of smaller "
        "modules, but callers must keep working with `from billing.invoice import "
        "render_invoice`."
    ).fact("goal", "into a package of smaller modules", form="first substantive request").fact(
        "import", "from billing.invoice import render_invoice", form="import line in backticks"
    )
    b.tool(
        "read_file",
        {"path": "billing/invoice.py"},
        "\n".join(f"def helper_{i}(x):\n    return x  # line {i}" for i in range(160)),
    )
    b.poll(
        "grep",
        [{"pattern": f"helper_{i}", "path": "billing/"} for i in range(30)],
        [f"billing/invoice.py:{10 + i * 7}: def helper_{i}(x):" for i in range(30)],
        acks=3,
    )
    b.user(
        "Also, heads up: the Lambda that renders PDFs is still on the 3.9 runtime, so no "
        "match statements or other 3.10+ syntax anywhere in billing."
    ).fact("python", "3.9 runtime", form="version as a runtime name, a 'heads up'")
    b.assistant("Understood — I'll keep the package 3.9-compatible.")
    b.tool(
        "terminal",
        {"command": "pytest tests/billing -q"},
        pytest_output(b.rng, "tests/billing/test_invoice.py", 64, failing="test_rounding_half_even")
        + "\nE       AssertionError: assert Decimal('10.01') == Decimal('10.00')",
    ).fact("failing", "test_rounding_half_even", form="failing test name in pytest output")
    b.assistant(
        "One failure: rounding used ROUND_HALF_UP after the move. Money in this module is "
        "Decimal throughout, and I'm restoring ROUND_HALF_EVEN."
    )
    b.user("Right. Money stays Decimal, never float, that bit us last year.").fact(
        "decimal", "never float", form="short constraint in chatty text"
    )
    b.chatter(2)
    b.user(
        "For the models, go with dataclasses rather than attrs — one less dependency for the "
        "Lambda layer."
    ).fact("dataclasses", "dataclasses rather than attrs", form="decision phrased as a preference")
    b.poll(
        "terminal",
        [{"command": f"pytest tests/billing -q -k case_{i:03d}"} for i in range(20)],
        [pytest_output(b.rng, "tests/billing/test_invoice.py", 3) for _ in range(20)],
        acks=2,
    )
    b.user("Dana reviews anything that touches tax code, so tag her on the PR.").fact(
        "reviewer", "Dana", form="a person's name, no marker"
    )
    b.assistant("Will do.")
    b.tool(
        "terminal",
        {"command": "pytest tests -q"},
        pytest_output(b.rng, "tests/billing/test_invoice.py", 64),
    )
    b.user("nice. can you write the PR description now?")
    b.assistant("Here is a draft PR description for the split.")
    return b.build(
        "## Goal\n- Split billing/invoice.py into a package of smaller modules; keep `from "
        "billing.invoice import render_invoice` working.\n## Constraints & Preferences\n- "
        "PDF Lambda is on the 3.9 runtime: no 3.10+ syntax.\n- Money stays Decimal, never "
        "float.\n- Models: dataclasses rather than attrs.\n- Dana reviews tax code: tag her "
        "on the PR.\n## Completed Actions\n1. pytest — test_rounding_half_even failed "
        "(ROUND_HALF_UP); fixed with ROUND_HALF_EVEN; all tests pass."
    )


def research_en() -> Scenario:
    b = ScenarioBuilder(
        "research-en", "en", "research", "screen time and sleep, for a grant", SYSTEM_EN
    )
    b.user("hello!").assistant("Hello! What are we researching?")
    b.user(
        "I'm writing the background section of a grant on screens and sleep in teenagers. "
        "Find me the strongest studies — only adolescents, roughly 13 to 17."
    ).fact("goal", "background section of a grant", form="first substantive request").fact(
        "ages", "13 to 17", form="age range in prose"
    )
    for query in ("screen time sleep adolescents", "smartphone bedtime sleep onset teens"):
        b.tool(
            "web_search",
            {"query": query},
            "\n".join(
                page(b.rng, "en", 6) + f" Sample: {b.rng.randint(40, 190)} students."
                for _ in range(8)
            ),
        )
    b.distractor("students", "sample sizes of small studies")
    b.user(
        "Skip anything with fewer than 200 participants; reviewers will tear small samples apart."
    ).fact("exclusion", "fewer than 200 participants", form="threshold with a reason")
    b.tool(
        "web_search",
        {"query": "Hale Guan 2015 screen time sleep systematic review"},
        page(
            b.rng,
            "en",
            10,
            seed_text="Hale & Guan (2015) reviewed 67 studies and found screen time "
            "associated with delayed bedtimes in 90% of them.",
        ),
    ).fact("paper", "Hale & Guan (2015)", form="citation inside a tool result")
    b.assistant("Hale & Guan is the anchor review; I'll look for newer cohort studies too.")
    b.chatter(2)
    b.user(
        "What matters most for us is how long it takes them to fall asleep, not total hours."
    ).fact("outcome", "how long it takes them to fall asleep", form="outcome described in words")
    b.poll(
        "fetch",
        [{"url": f"https://journals.example.org/article/{1000 + i}"} for i in range(18)],
        [page(b.rng, "en", 12) for _ in range(18)],
        acks=3,
    )
    b.user("The preregistration is on OSF at https://osf.io/k7q2m, cite it in the section.").fact(
        "url", "https://osf.io/k7q2m", form="URL in user text"
    )
    b.assistant("Noted.")
    b.user("Formatting: APA 7th edition, and the whole section has to be done by Thursday.").fact(
        "style", "APA 7th", form="style name"
    ).fact("deadline", "Thursday", form="deadline as a weekday")
    b.tool("fetch", {"url": "https://journals.example.org/article/2044"}, page(b.rng, "en", 30))
    b.user("ok. draft the first paragraph?")
    b.assistant("Here is a first paragraph for the background section.")
    return b.build(
        "## Goal\n- Background section of a grant on screens and sleep in teenagers "
        "(adolescents 13 to 17).\n## Constraints & Preferences\n- Exclude studies with fewer "
        "than 200 participants.\n- Primary interest: how long it takes them to fall asleep, "
        "not total hours.\n- APA 7th edition; due Thursday.\n## Relevant Files\n- "
        "https://osf.io/k7q2m (preregistration, cite it)\n## Critical Context\n- Anchor "
        "review: Hale & Guan (2015), 67 studies."
    )


def chat_travel_en() -> Scenario:
    b = ScenarioBuilder("chat-travel-en", "en", "chat", "family trip to Lisbon", SYSTEM_EN)
    b.user("hey").assistant("Hey! How can I help?")
    b.user(
        "Help me plan a family trip to Lisbon in May — me, my husband, our daughter who's "
        "seven, and my mom."
    ).fact("goal", "family trip to Lisbon", form="first substantive request")
    b.chatter(2)
    b.user("Oh and Inês is allergic to tree nuts, properly allergic, so restaurants matter.").fact(
        "allergy", "allergic to tree nuts", form="health fact without a marker word"
    )
    hotels = "\n".join(
        f"{name} — €{b.rng.randint(120, 340)}/night — rating {b.rng.uniform(7.5, 9.6):.1f}"
        for name in (
            "Hotel Avenida Palace",
            "Casa do Largo",
            "Memmo Alfama",
            "Lisboa Pessoa",
            "Hotel Britania",
            "The Lumiares",
            "Almalusa Baixa",
            "Pestana Palace",
        )
    )
    b.tool("web_search", {"query": "family hotels Lisbon May"}, hotels)
    b.distractor("Hotel Avenida Palace", "a hotel not chosen")
    b.tool("fetch", {"url": "https://www.visitlisboa.example/families"}, page(b.rng, "en", 60))
    b.poll(
        "web_search",
        [
            {"query": f"Lisbon restaurant nut free {area}"}
            for area in (
                "Alfama",
                "Baixa",
                "Chiado",
                "Belém",
                "Bairro Alto",
                "Príncipe Real",
                "Cais do Sodré",
                "Graça",
                "Estrela",
                "Campo de Ourique",
            )
        ],
        [page(b.rng, "en", 8) for _ in range(10)],
        acks=2,
    )
    b.user("Let's book Casa do Largo, the kitchenette will save us with the allergy.").fact(
        "hotel", "Casa do Largo", form="decision in casual words"
    )
    b.user("Flights are booked already: TP 1367 out of Boston on the 9th.").fact(
        "flight", "TP 1367", form="flight number"
    )
    b.assistant("Great, I'll plan around landing on the 10th.")
    b.user("Total budget for everything apart from flights is €3,200.").fact(
        "budget", "€3,200", form="currency amount"
    )
    b.chatter(3)
    b.user(
        "The real reason for the trip is my mom's 70th — her birthday is on the 14th, so that "
        "evening needs to be special."
    ).fact("birthday", "the 14th", form="date as an ordinal, with a reason")
    b.tool(
        "web_search",
        {"query": "Lisbon birthday dinner view private room"},
        page(b.rng, "en", 70),
    )
    b.user("Also I get claustrophobic on trams, so no tram 28 even if it's iconic.").fact(
        "tram", "no tram 28", form="preference stated as a negation with a reason"
    )
    b.user("ok what would day 3 look like?")
    b.assistant("Day 3 could be Belém in the morning and a slow afternoon.")
    return b.build(
        "## Goal\n- Family trip to Lisbon in May (user, husband, daughter Inês aged seven, "
        "mom).\n## Constraints & Preferences\n- Inês is allergic to tree nuts.\n- Budget "
        "€3,200 excluding flights.\n- No tram 28 (claustrophobic).\n## Key Decisions\n- Hotel: "
        "Casa do Largo (kitchenette).\n## Critical Context\n- Flight TP 1367 from Boston on "
        "the 9th.\n- Mom's 70th birthday on the 14th: special evening."
    )


def ops_incident_en() -> Scenario:
    b = ScenarioBuilder("ops-incident-en", "en", "ops", "payments pods crash-looping", SYSTEM_EN)
    b.user("yo").assistant("Hi! What's up?")
    b.user(
        "payments-api pods keep restarting in prod since the 14:00 deploy. Figure out why and "
        "get it stable."
    ).fact("goal", "get it stable", form="first substantive request")
    b.poll(
        "terminal",
        [{"command": "kubectl get pods -n payments-prod -l app=payments-api"} for _ in range(30)],
        [
            "NAME                            READY   STATUS             RESTARTS   AGE\n"
            + "\n".join(
                f"payments-api-7d9f{b.rng.randint(100, 999)}-{b.rng.randint(1000, 9999)}   "
                f"0/1     CrashLoopBackOff   {b.rng.randint(3, 40)}          "
                f"{b.rng.randint(5, 50)}m"
                for _ in range(4)
            )
            for _ in range(30)
        ],
        acks=5,
    )
    b.distractor("CrashLoopBackOff", "status noise repeated in every poll")
    b.tool(
        "terminal",
        {"command": "kubectl describe pod payments-api-7d9f512-4410 -n payments-prod"},
        "Last State: Terminated\n  Reason: OOMKilled\n  Exit Code: 137\nLimits:\n  memory: "
        "512Mi\nRequests:\n  memory: 256Mi",
    ).fact("oom", "OOMKilled", form="reason field in kubectl output")
    b.assistant(
        "They're being OOMKilled at the 512Mi limit. The new build loads the fraud model at "
        "startup."
    )
    b.user(
        "Raise the limit to 1Gi for now, and roll back to the last good image if that doesn't "
        "hold. Last good one was v2.14.3."
    ).fact("limit", "1Gi", form="quantity with a k8s unit").fact(
        "rollback", "v2.14.3", form="image tag as a version"
    )
    b.tool(
        "terminal",
        {"command": "kubectl logs deploy/payments-api -n payments-prod --tail=150"},
        log_lines(b.rng, "payments-api", 150),
    )
    b.chatter(2)
    b.user(
        "Whatever happens don't bounce the ingress controller, it drops every open websocket "
        "and support gets flooded."
    ).fact("ingress", "don't bounce the ingress controller", form="marked constraint with reason")
    b.user("Marcus is on call after 18:00, hand over to him if we're not done.").fact(
        "oncall", "Marcus", form="a person's name"
    )
    b.poll(
        "terminal",
        [
            {"command": "kubectl rollout status deploy/payments-api -n payments-prod"}
            for _ in range(15)
        ],
        [
            'Waiting for deployment "payments-api" rollout to finish: 2 of 4 updated replicas are '
            "available..."
            for _ in range(15)
        ],
        acks=3,
    )
    b.user("The customer escalation is SUP-4471, post the root cause there when done.").fact(
        "ticket", "SUP-4471", form="ticket id"
    )
    b.assistant("Will do once the rollout settles.")
    b.user("how does it look now?")
    b.assistant("All four pods are Running with 0 restarts in the last 10 minutes.")
    return b.build(
        "## Goal\n- Stop payments-api pods restarting in prod (since the 14:00 deploy) and get "
        "it stable.\n## Critical Context\n- Cause: OOMKilled at 512Mi (fraud model loaded at "
        "startup).\n## Key Decisions\n- Limit raised to 1Gi; fallback: roll back to v2.14.3.\n"
        "## Constraints & Preferences\n- Don't bounce the ingress controller (drops "
        "websockets).\n- Marcus is on call after 18:00: hand over.\n- Post root cause on "
        "SUP-4471."
    )


def chat_speech_en() -> Scenario:
    b = ScenarioBuilder("chat-speech-en", "en", "chat", "a best-man speech", SYSTEM_EN)
    b.user("hi").assistant("Hi! What can I do for you?")
    b.user(
        "I'm the best man at my brother's wedding next month and I need help writing the "
        "speech. His name is Tomasz and he's marrying Ana."
    ).fact("goal", "writing the speech", form="first substantive request").fact(
        "names", "Tomasz", "Ana", form="names in prose"
    )
    drafts = ["Good evening everyone. " + page(b.rng, "en", 45) for _ in range(4)]
    b.assistant("Here's a first rough draft:\n\n" + drafts[0])
    b.user("Too long. The DJ gave me four minutes, tops.").fact(
        "length", "four minutes", form="time limit in words"
    )
    b.assistant("Shorter version:\n\n" + drafts[1])
    b.chatter(3)
    b.user("Please don't mention Vegas at all. Ana's parents would not find it funny.").fact(
        "vegas", "don't mention Vegas", form="topic to avoid, marked"
    )
    b.assistant("Removed. New version:\n\n" + drafts[2])
    b.user(
        "Their grandmother only speaks Polish, so end with one line in Polish for her: "
        "'Sto lat, kochani!'"
    ).fact("polish", "Sto lat, kochani!", form="a quoted phrase in another language")
    b.assistant("Lovely idea. Updated draft:\n\n" + drafts[3])
    b.chatter(2)
    b.user(
        "The story I want in the middle is when he taught me to ride a bike and we both "
        "ended up in the neighbour's hedge."
    ).fact("story", "neighbour's hedge", form="an anecdote to include")
    b.user("There'll be about 120 people, mostly family.").fact(
        "guests", "120 people", form="audience size"
    )
    b.assistant("That helps with tone: warm and inclusive.")
    b.user("ok can you put it all together one more time?")
    b.assistant("Here's the full speech, about three and a half minutes read aloud.")
    return b.build(
        "## Goal\n- Writing the speech: best man at brother Tomasz's wedding to Ana.\n"
        "## Constraints & "
        "Preferences\n- Four minutes, tops.\n- Don't mention Vegas.\n- End with one line in "
        "Polish for the grandmother: 'Sto lat, kochani!'\n- Include the story of the bike "
        "lesson ending in the neighbour's hedge.\n## Critical Context\n- About 120 people, "
        "mostly family."
    )


def coding_payment_zh() -> Scenario:
    b = ScenarioBuilder("coding-payment-zh", "zh", "coding", "重构支付回调接口", SYSTEM_ZH)
    b.user("在吗").assistant("在的，有什么需要？")
    b.user(
        "帮我重构一下支付回调的处理逻辑，现在全写在一个函数里，三百多行。对外的地址 "
        "/api/v1/pay/notify 一个字都不能改，支付宝那边配置死了。"
    ).fact("goal", "支付回调的处理逻辑", form="第一条实质请求").fact(
        "path", "/api/v1/pay/notify", form="接口地址，带原因"
    )
    b.tool(
        "read_file",
        {"path": "app/pay/notify.py"},
        "\n".join(f"    step_{i} = handle(payload)  # 第{i}步" for i in range(150)),
    )
    b.poll(
        "grep",
        [{"pattern": f"step_{i}", "path": "app/pay"} for i in range(24)],
        [f"app/pay/notify.py:{30 + i}:    step_{i} = handle(payload)" for i in range(24)],
        acks=3,
    )
    b.user("验签用的是 HMAC-SHA256，密钥从环境变量读，不要写进代码。").fact(
        "sign", "HMAC-SHA256", form="算法名"
    )
    b.assistant("好的，签名逻辑单独抽成一个模块。")
    b.tool(
        "terminal",
        {"command": "pytest tests/pay -q"},
        pytest_output(b.rng, "tests/pay/test_notify.py", 48, failing="test_notify_duplicate")
        + "\nE       AssertionError: 重复通知被处理了两次",
    ).fact("failing", "test_notify_duplicate", form="pytest 输出里的失败用例")
    b.chatter(2)
    b.user("幂等就用 Redis 吧，key 按 pay:idem:订单号 这个格式，别用数据库锁了。").fact(
        "idem", "pay:idem:", form="用口语说的决定"
    )
    b.assistant("明白，改用 Redis SETNX 做幂等。")
    b.user("支付宝要求三秒内回 success，超时它会一直重试。").fact(
        "timeout", "三秒", form="中文数字的时间限制"
    )
    b.poll(
        "terminal",
        [{"command": f"pytest tests/pay -q -k case_{i:03d}"} for i in range(16)],
        [pytest_output(b.rng, "tests/pay/test_notify.py", 3) for _ in range(16)],
        acks=2,
    )
    b.user("代码写完给老周看一下，他管支付这块。").fact("reviewer", "老周", form="人名")
    b.assistant("好的，提交后请老周评审。")
    b.user("现在测试都过了吗？")
    b.assistant("全部通过了，一共四十八个用例。")
    return b.build(
        "## Goal\n- 重构支付回调的处理逻辑；对外地址 /api/v1/pay/notify 不能改。\n"
        "## Constraints & Preferences\n- 验签 HMAC-SHA256，密钥从环境变量读。\n- 三秒内回 "
        "success。\n- 老周评审。\n## Key Decisions\n- 幂等用 Redis，key 格式 pay:idem:订单号。\n"
        "## Completed Actions\n1. pytest：test_notify_duplicate 失败（重复通知处理两次），已修复。"
    )


def research_zh() -> Scenario:
    b = ScenarioBuilder("research-zh", "zh", "research", "竞品定价调研", SYSTEM_ZH)
    b.user("你好").assistant("你好！今天调研什么？")
    b.user("帮我调研一下做点餐系统的竞品都怎么定价，我们下个月要出新的价格方案。").fact(
        "goal", "竞品都怎么定价", form="第一条实质请求"
    )
    b.user("我们的客户主要是街边的小餐馆，十张桌子以内那种。").fact(
        "customers", "小餐馆", form="客户画像"
    )
    for query in ("点餐系统 收费", "餐饮 SaaS 价格", "扫码点餐 年费"):
        b.tool(
            "web_search",
            {"query": query},
            "\n".join(
                page(b.rng, "zh", 5) + f"年费约 {b.rng.randint(800, 9800)} 元。" for _ in range(8)
            ),
        )
    b.distractor("年费约", "各种网页上的价格")
    b.user("海外的产品就不用看了，国内小店用不起来。").fact(
        "exclude", "海外的产品", form="排除条件"
    )
    b.poll(
        "fetch",
        [{"url": f"https://news.example.cn/article/{2000 + i}"} for i in range(16)],
        [page(b.rng, "zh", 14) for _ in range(16)],
        acks=3,
    )
    b.assistant("目前看到的最接近的竞品是「客如云」，基础版按年收费。")
    b.user("对，重点对比客如云，他们最近把基础版降到了每年 1980 元。").fact(
        "price", "1980", form="价格"
    ).fact("rival", "客如云", form="竞品名")
    b.chatter(2)
    b.user("结论里要写清楚我们能不能做到比他们便宜两成。").fact(
        "target", "便宜两成", form="中文比例"
    )
    b.user("下周三之前要给老板看初稿。").fact("deadline", "下周三", form="相对日期")
    b.tool("fetch", {"url": "https://news.example.cn/article/3100"}, page(b.rng, "zh", 40))
    b.user("先列个提纲？")
    b.assistant("好的，提纲如下：一、市场概况；二、竞品价格；三、建议。")
    return b.build(
        "## Goal\n- 调研点餐系统竞品都怎么定价，为下个月的新价格方案。\n## Constraints & "
        "Preferences\n- 客户：街边小餐馆（十张桌子以内）。\n- 不看海外的产品。\n- 下周三前给老板"
        "初稿。\n## Critical Context\n- 重点对比客如云：基础版每年 1980 元。\n- 结论写明能否比他们"
        "便宜两成。"
    )


def chat_renovation_zh() -> Scenario:
    b = ScenarioBuilder("chat-renovation-zh", "zh", "chat", "新房装修", SYSTEM_ZH)
    b.user("嗨").assistant("嗨！有什么可以帮你？")
    b.user("我们刚买了套两居室，想请你帮忙规划一下装修，从哪里开始都不知道。").fact(
        "goal", "规划一下装修", form="第一条实质请求"
    )
    b.chatter(3)
    b.user("总共只有二十万，家电也要算在里面。").fact("budget", "二十万", form="中文数字预算")
    b.tool(
        "web_search",
        {"query": "两居室 装修 报价 清单"},
        "\n".join(
            page(b.rng, "zh", 4) + f"半包报价 {b.rng.randint(6, 15)} 万。" for _ in range(10)
        ),
    )
    b.distractor("半包报价", "网上的报价")
    b.user("我老婆做饭油烟大，开放式厨房就算了。").fact(
        "kitchen", "开放式厨房就算了", form="口语化的否定"
    )
    b.poll(
        "web_search",
        [
            {"query": f"地板 {kind} 优缺点"}
            for kind in ("实木", "实木复合", "强化", "SPC", "瓷砖", "竹地板", "软木", "地毯")
        ],
        [page(b.rng, "zh", 10) for _ in range(8)],
        acks=2,
    )
    b.user("地板就定实木复合吧，脚感好又不太娇气。").fact("floor", "实木复合", form="口语化的决定")
    b.user("我妈会过来帮忙带孩子，她那间一定要朝南的。").fact("south", "朝南", form="标记过的要求")
    b.chatter(2)
    b.user("设计师是朋友介绍的小林，图纸她周五发过来。").fact("designer", "小林", form="人名")
    b.user("最晚明年五一前要住进去。").fact("movein", "五一", form="节日作为截止时间")
    b.tool("web_search", {"query": "装修 工期 两居室"}, page(b.rng, "zh", 90))
    b.user("那先做什么？")
    b.assistant("先定设计方案和水电改造，再做瓷砖和木工。")
    return b.build(
        "## Goal\n- 规划一下装修（两居室新房）。\n## Constraints & Preferences\n"
        "- 总预算二十万，含家电。\n"
        "- 开放式厨房就算了（油烟大）。\n- 老人房一定要朝南。\n- 明年五一前入住。\n## Key "
        "Decisions\n- 地板：实木复合。\n## Critical Context\n- 设计师小林，周五发图纸。"
    )


def ops_disk_zh() -> Scenario:
    b = ScenarioBuilder("ops-disk-zh", "zh", "ops", "磁盘告警处理", SYSTEM_ZH)
    b.user("在不在").assistant("在的。")
    b.user("web-sh-07 这台机器的 /data 盘又报警了，帮我看看怎么回事，顺便想个长期的办法。").fact(
        "goal", "长期的办法", form="第一条实质请求"
    ).fact("host", "web-sh-07", form="主机名")
    b.tool(
        "terminal",
        {"command": "df -h /data"},
        "Filesystem      Size  Used Avail Use% Mounted on\n"
        "/dev/vdb1       500G  485G   15G  97% /data",
    ).fact("usage", "97%", form="df 输出里的百分比")
    b.poll(
        "terminal",
        [{"command": f"du -sh /data/logs/app-{i:02d}"} for i in range(28)],
        [f"{b.rng.randint(1, 40)}G\t/data/logs/app-{i:02d}" for i in range(28)],
        acks=4,
    )
    b.tool(
        "terminal",
        {"command": "tail -n 120 /data/logs/app-01/app.log"},
        log_lines(b.rng, "app", 120)
        + "\nOSError: [Errno 28] No space left on device: '/data/logs/app-01/app.log'",
    ).fact("enospc", "No space left on device", form="工具输出里的错误")
    b.assistant("应用已经开始写不进日志了。日志目录占了大部分空间。")
    b.user("日志留十四天就够了，再老的直接删。").fact("retention", "十四天", form="中文数字保留期")
    b.chatter(2)
    b.user("发告警通知的时候发到运维值班群就行，千万别@所有人。").fact(
        "notify", "别@所有人", form="标记过的约束"
    )
    b.poll(
        "terminal",
        [{"command": "df -h /data"} for _ in range(12)],
        [
            f"/dev/vdb1       500G  {480 - i * 10}G   {20 + i * 10}G  {96 - i * 2}% /data"
            for i in range(12)
        ],
        acks=3,
    )
    b.distractor("74%", "清理过程中的中间值")
    b.user("这次的处理记到工单 OPS-2291 里。").fact("ticket", "OPS-2291", form="工单号")
    b.assistant("好的。")
    b.user("现在还剩多少？")
    b.assistant("清理完之后 /data 还有一半以上空间。")
    return b.build(
        "## Goal\n- 处理 web-sh-07 的 /data 磁盘告警，并想个长期的办法。\n## Critical Context\n"
        "- 使用率 97%，应用报 No space left on device。\n## Constraints & Preferences\n- 日志保留"
        "十四天，更老的删除。\n- 通知发运维值班群，别@所有人。\n- 处理过程记到工单 OPS-2291。"
    )


def data_report_zh() -> Scenario:
    b = ScenarioBuilder("data-report-zh", "zh", "coding", "每周销售报表自动化", SYSTEM_ZH)
    b.user("你好呀").assistant("你好！需要什么帮助？")
    b.user("每周的销售报表现在是手工拉的，帮我写个脚本自动生成，然后定时发邮件。").fact(
        "goal", "自动生成", form="第一条实质请求"
    )
    b.user("数据从 dw.sales_daily 这张表出。").fact("table", "dw.sales_daily", form="表名")
    b.tool(
        "terminal",
        {"command": "psql -c '\\d dw.sales_daily'"},
        "\n".join(f" col_{i:03d} | text | nullable | default ''::text" for i in range(160)),
    )
    b.user("切日按北京时间，不要用 UTC，上次就因为这个对不上账。").fact(
        "tz", "北京时间", form="带原因的约束"
    )
    b.poll(
        "terminal",
        [{"command": f"python report.py --week 2026-W{w:02d} --dry-run"} for w in range(1, 21)],
        [
            f"rows={b.rng.randint(10000, 90000)} total={b.rng.randint(10**6, 9 * 10**6)}"
            for _ in range(20)
        ],
        acks=4,
    )
    b.distractor("rows=", "试跑的行数")
    b.tool(
        "terminal",
        {"command": "python report.py --week 2026-W21"},
        'Traceback (most recent call last):\n  File "report.py", line 88, in build\n'
        "    region = row['region_code']\nKeyError: 'region_code'",
    ).fact("error", "KeyError: 'region_code'", form="工具输出里的异常")
    b.assistant("第 21 周的数据里有几行没有 region_code，我改成归到「未知地区」。")
    b.user("可以。退款不算进销售额，这个口径财务很在意。").fact(
        "refund", "退款不算进销售额", form="口径约束"
    )
    b.chatter(3)
    b.user("邮件发给财务部的王敏，每周一早上九点发。").fact("to", "王敏", form="人名").fact(
        "when", "每周一早上九点", form="时间"
    )
    b.tool(
        "read_file",
        {"path": "report.py"},
        "\n".join(
            f"    df_{i} = df.groupby('region').agg(total=('amount', 'sum'))" for i in range(120)
        ),
    )
    b.user("现在能跑通吗？")
    b.assistant("能跑通，明早我再试一次定时任务。")
    return b.build(
        "## Goal\n- 自动生成每周销售报表并定时发邮件。\n## Constraints & Preferences\n- 数据源 "
        "dw.sales_daily。\n- 按北京时间切日，不用 UTC。\n- 退款不算进销售额。\n- 每周一早上九点发给"
        "财务部的王敏。\n## Completed Actions\n1. 第 21 周报 KeyError: 'region_code'，缺失的归到"
        "未知地区。"
    )


def chat_running_zh() -> Scenario:
    b = ScenarioBuilder("chat-running-zh", "zh", "chat", "马拉松训练计划", SYSTEM_ZH)
    b.user("hi").assistant("你好！")
    b.user("我想跑今年十月的杭州马拉松，帮我排一个训练计划吧。").fact(
        "goal", "杭州马拉松", form="第一条实质请求"
    )
    b.chatter(3)
    b.user("先说一下，我左膝半月板做过手术，跑多了会疼。").fact(
        "knee", "左膝半月板", form="健康情况"
    )
    b.assistant("了解，计划会控制跑量，加强力量训练。")
    b.tool(
        "web_search",
        {"query": "全马 训练计划 16周"},
        "\n".join(
            page(b.rng, "zh", 6) + f"每周跑量 {b.rng.randint(30, 90)} 公里。" for _ in range(10)
        ),
    )
    b.distractor("每周跑量", "网上计划的跑量")
    b.user("一周最多只能跑四次，工作太忙了。").fact("freq", "四次", form="中文数字的上限")
    b.poll(
        "web_search",
        [{"query": f"马拉松 配速 {m} 分钟"} for m in range(5, 13)],
        [page(b.rng, "zh", 10) for _ in range(8)],
        acks=2,
    )
    b.user("目标是全程配速六分半左右，能完赛就行。").fact("pace", "六分半", form="口语化的配速")
    b.user("我不喝牛奶也不吃奶制品，补给别推荐这些。").fact("dairy", "奶制品", form="饮食偏好")
    b.chatter(2)
    b.user("周末可以长距离，周中只有早上六点到七点有空。").fact(
        "time", "早上六点到七点", form="时间段"
    )
    b.tool("web_search", {"query": "半月板 术后 跑步 注意"}, page(b.rng, "zh", 90))
    b.user("第一周怎么安排？")
    b.assistant("第一周以轻松跑和力量训练为主，周末一次长距离慢跑。")
    return b.build(
        "## Goal\n- 为今年十月的杭州马拉松排训练计划。\n## Constraints & Preferences\n- 左膝半月板"
        "做过手术。\n- 一周最多跑四次。\n- 不吃奶制品。\n"
        "- 周中只有早上六点到七点有空，周末可长距离。\n"
        "## Critical Context\n- 目标配速六分半左右。"
    )


def ops_ci_en() -> Scenario:
    b = ScenarioBuilder("ops-ci-en", "en", "ops", "flaky CI on the release branch", SYSTEM_EN)
    b.user("morning!").assistant("Morning! What's on the list?")
    b.user(
        "CI on release/4.2 is red on and off since yesterday. Find the flaky job and make the "
        "branch releasable."
    ).fact("goal", "make the branch releasable", form="first substantive request")
    b.poll(
        "terminal",
        [{"command": f"gh run view {700100 + i} --log-failed"} for i in range(26)],
        [log_lines(b.rng, "runner", 6, level_mix=False) for _ in range(26)],
        acks=4,
    )
    b.tool(
        "terminal",
        {"command": "gh run view 700131 --log-failed"},
        log_lines(b.rng, "runner", 40)
        + "\nintegration-tests  Error: connect ECONNREFUSED 127.0.0.1:6379\n"
        "integration-tests  Process completed with exit code 1.",
    ).fact("econnrefused", "ECONNREFUSED 127.0.0.1:6379", form="error line with an address")
    b.assistant("The integration job sometimes starts before its Redis service container is ready.")
    b.user(
        "Fix it with a proper health check on the service, not a sleep. Sleeps are banned in "
        "our workflows."
    ).fact("nosleep", "not a sleep", form="constraint, with a house rule")
    b.chatter(2)
    b.user(
        "The release manager is Priya Natarajan; she wants a green run three times in a row "
        "before tagging."
    ).fact("rm", "Priya Natarajan", form="a person's full name").fact(
        "three", "three times in a row", form="a count in words"
    )
    b.poll(
        "terminal",
        [{"command": "gh run watch --exit-status"} for _ in range(14)],
        [log_lines(b.rng, "runner", 8) for _ in range(14)],
        acks=3,
    )
    b.user("Tag will be 4.2.0-rc.3 once it's green.").fact("tag", "4.2.0-rc.3", form="version tag")
    b.tool(
        "read_file",
        {"path": ".github/workflows/ci.yml"},
        "\n".join(f"      - run: step {i}" for i in range(120)),
    )
    b.user("how many green runs so far?")
    b.assistant("Two consecutive green runs; the third is in progress.")
    return b.build(
        "## Goal\n- Find the flaky CI job on release/4.2 and make the branch releasable.\n"
        "## Critical Context\n- integration-tests: Error: connect ECONNREFUSED 127.0.0.1:6379 "
        "(Redis service not ready).\n## Constraints & Preferences\n- Fix with a health check, "
        "not a sleep.\n- Release manager Priya Natarajan wants green three times in a row "
        "before tagging.\n- Tag: 4.2.0-rc.3."
    )


def coding_debug_en() -> Scenario:
    b = ScenarioBuilder(
        "coding-debug-en", "en", "coding", "tenants seeing each other's cached data", SYSTEM_EN
    )
    b.user("hey, got a nasty one").assistant("Sure, what's going on?")
    b.user(
        "So this is a bit embarrassing, I've been staring at it since lunch and my coffee went "
        "cold twice. Customers on the shared plan are occasionally seeing another company's "
        "dashboard numbers for a few seconds after login. It's intermittent, it started after "
        "last Tuesday's release, and our CTO is, let's say, interested. Find out what's going "
        "on, but this is production data so reads only until I say otherwise."
    ).fact(
        "goal",
        "seeing another company's dashboard numbers",
        form="request inside a long, chatty message",
    ).fact(
        "readonly",
        "reads only until I say otherwise",
        form="constraint at the end of a long message",
    )
    b.tool(
        "terminal",
        {"command": "git log --oneline -n 40"},
        "\n".join(
            f"{b.rng.getrandbits(28):07x} {msg}"
            for msg in [
                "bump deps",
                "fix typo",
                "dashboard: cache widgets",
                "ci: cache pip",
                "docs",
            ]
            * 8
        ),
    )
    b.poll(
        "read_file",
        [{"path": f"app/dashboard/widgets/w{i:02d}.py"} for i in range(22)],
        ["\n".join(f"    value_{j} = compute({j})" for j in range(30)) for _ in range(22)],
        acks=3,
    )
    b.tool(
        "read_file",
        {"path": "app/dashboard/cache.py"},
        "\n".join(f"# {i}" for i in range(40))
        + '\ndef cache_key(widget, user):\n    return f"dash:{widget.id}:{user.plan}"\n',
    )
    b.assistant(
        "I think I've found it, and it fits everything you described. In the release, widget "
        "results started being cached, and if you look at cache_key in app/dashboard/cache.py "
        "it is built from the widget id and the user's plan only: the tenant id is not part of "
        "the key. So two companies on the shared plan who open the same widget within the TTL "
        "get each other's cached result. That also explains why it's only the shared plan and "
        "only for a few seconds — the TTL is short. The fix is to put the tenant id into the "
        "key and flush the existing dash: keys once."
    ).fact(
        "cause",
        "tenant id is not part of the key",
        form="root cause buried in an assistant explanation",
    )
    b.chatter(2)
    b.tool(
        "terminal",
        {"command": "redis-cli -h cache-eu-1 info keyspace"},
        "# Keyspace\ndb0:keys=184233,expires=184101,avg_ttl=9000\ndb3:keys=12,expires=0,avg_ttl=0",
    ).distractor("184233", "key count, not needed")
    b.user("ok. make the fix on a branch, I'll deploy it myself tonight.")
    b.tool(
        "terminal",
        {
            "command": "git switch -c fix/tenant-cache-key && "
            "git commit -am 'cache key includes tenant'"
        },
        "Switched to a new branch 'fix/tenant-cache-key'\n[fix/tenant-cache-key 9c41e7a] cache "
        "key includes tenant\n 2 files changed, 11 insertions(+), 3 deletions(-)",
    ).fact("branch", "fix/tenant-cache-key", form="branch name in git output").fact(
        "commit", "9c41e7a", form="commit hash in git output"
    )
    b.poll(
        "terminal",
        [{"command": f"pytest tests/dashboard -q -k widget_{i:02d}"} for i in range(16)],
        [pytest_output(b.rng, "tests/dashboard/test_widgets.py", 4) for _ in range(16)],
        acks=2,
    )
    b.assistant(
        "Tests pass. When you deploy, remember the old entries: run the flush for the dash: "
        "prefix on cache-eu-1 right after the deploy, otherwise stale cross-tenant entries "
        "live until their TTL."
    ).fact("flush", "flush for the dash: prefix", form="follow-up instruction in assistant text")
    b.user("what do I tell the CTO?")
    b.assistant("A short incident note: cause, blast radius, fix, and the follow-up flush.")
    return b.build(
        "## Goal\n- Customers on the shared plan were seeing another company's dashboard "
        "numbers after login; find out why.\n## Constraints & Preferences\n- Production data: "
        "reads only until I say otherwise.\n## Critical Context\n- Cause: cache_key in "
        "app/dashboard/cache.py uses widget id and plan; the tenant id is not part of the key.\n"
        "## Completed Actions\n1. Fix committed on branch fix/tenant-cache-key (9c41e7a); "
        "tests pass.\n## Historical Remaining Work\n- After the deploy, run the flush for the "
        "dash: prefix on cache-eu-1."
    )


def ops_cert_zh() -> Scenario:
    b = ScenarioBuilder("ops-cert-zh", "zh", "ops", "证书续期和网关切换", SYSTEM_ZH)
    b.user("哈喽").assistant("你好！需要做什么？")
    b.user(
        "是这样的，我们官网的证书下个月就到期了，之前一直是小王手动续的，他上个月离职了，"
        "交接文档写得乱七八糟，我看了半天也没看懂。能不能帮我把证书续上，最好顺便改成自动续期，"
        "以后就不用人盯着了。对了，网关那台机器是生产环境，重启之前一定要先跟我说。"
    ).fact("goal", "改成自动续期", form="长段落里的请求").fact(
        "restart", "重启之前一定要先跟我说", form="长段落末尾的约束"
    )
    b.tool(
        "terminal",
        {"command": "openssl x509 -in /etc/nginx/certs/site.pem -noout -dates"},
        "notBefore=Mar 14 00:00:00 2025 GMT\nnotAfter=Mar 13 23:59:59 2026 GMT",
    ).fact("expiry", "Mar 13 23:59:59 2026", form="工具输出里的到期时间")
    b.poll(
        "terminal",
        [
            {"command": f"grep -rn ssl_certificate /etc/nginx/conf.d/site-{i:02d}.conf"}
            for i in range(20)
        ],
        [
            f"/etc/nginx/conf.d/site-{i:02d}.conf:{b.rng.randint(3, 40)}:    "
            "ssl_certificate /etc/nginx/certs/site.pem;"
            for i in range(20)
        ],
        acks=4,
    )
    b.assistant(
        "我看了一下，这几个站点都引用同一张证书 /etc/nginx/certs/site.pem。证书是在阿里云买的 "
        "OV 证书，不是 Let's Encrypt，所以不能直接用 certbot 自动续，要么继续每年在控制台续费，"
        "要么换成 Let's Encrypt 的免费证书。"
    ).fact("ov", "不能直接用 certbot", form="助手解释里的关键结论")
    b.chatter(2)
    b.user("那就换成 Let's Encrypt 吧，省事。DNS 在 Cloudflare 上，用 DNS 验证。").fact(
        "le", "换成 Let's Encrypt", form="口语化的决定"
    ).fact("dns", "Cloudflare", form="服务商名")
    b.tool(
        "terminal",
        {"command": "certbot certonly --dns-cloudflare -d example.cn -d www.example.cn"},
        log_lines(b.rng, "certbot", 40, level_mix=False)
        + "\nSuccessfully received certificate.\nCertificate is saved at: "
        "/etc/letsencrypt/live/example.cn/fullchain.pem",
    ).fact("newcert", "/etc/letsencrypt/live/example.cn/fullchain.pem", form="工具输出里的路径")
    b.poll(
        "terminal",
        [{"command": "systemctl status certbot.timer"} for _ in range(10)],
        [
            "● certbot.timer - Run certbot twice daily\n   Active: active (waiting)"
            for _ in range(10)
        ],
        acks=2,
    )
    b.assistant("新证书已经签好了。要切换 nginx 的配置并 reload 网关，需要你确认。")
    b.user("现在可以 reload 吗？")
    b.assistant("可以，reload 不会断开现有连接。")
    return b.build(
        "## Goal\n- 续官网证书，并改成自动续期。\n## Constraints & Preferences\n- 网关是生产环境，"
        "重启之前一定要先跟我说。\n## Critical Context\n- 旧证书 /etc/nginx/certs/site.pem 到期："
        "Mar 13 23:59:59 2026 GMT。\n- 旧证书是阿里云 OV 证书，不能直接用 certbot 自动续。\n"
        "## Key Decisions\n- 换成 Let's Encrypt，DNS 在 Cloudflare，用 DNS 验证。\n## Completed "
        "Actions\n1. 新证书：/etc/letsencrypt/live/example.cn/fullchain.pem。"
    )


def research_notes_en() -> Scenario:
    b = ScenarioBuilder(
        "research-notes-en", "en", "research", "choosing a vector database", SYSTEM_EN
    )
    b.user("hello").assistant("Hello! What are we looking into?")
    b.user(
        "We need to pick a vector database for the support-search feature. Compare the main "
        "options for us and recommend one."
    ).fact("goal", "pick a vector database", form="first substantive request")
    b.user(
        "Context you should know: we're a four-person team, nobody wants to run another "
        "stateful service, and everything we have is already on Postgres 15."
    ).fact("team", "four-person team", form="team size in words").fact(
        "pg", "Postgres 15", form="version in prose"
    )
    b.poll(
        "fetch",
        [{"url": f"https://docs.vendor{i}.example/benchmarks"} for i in range(12)],
        [
            page(
                b.rng,
                "en",
                14,
                seed_text=f"Throughput reached {b.rng.randint(800, 9000)} QPS "
                f"at recall {b.rng.uniform(0.90, 0.99):.2f}.",
            )
            for i in range(12)
        ],
        acks=3,
    )
    b.distractor("QPS", "vendor benchmark figures")
    b.tool(
        "fetch",
        {"url": "https://github.com/pgvector/pgvector"},
        page(b.rng, "en", 20, seed_text="HNSW indexes were added in version 0.5.0."),
    ).fact("hnsw", "0.5.0", form="version inside fetched docs")
    b.assistant(
        "Given no new stateful services and an existing Postgres 15, pgvector is the natural "
        "fit. Its HNSW index (since 0.5.0) closes most of the recall gap to dedicated engines "
        "at our scale of roughly two million embeddings."
    ).fact("scale", "two million embeddings", form="scale in words, assistant text")
    b.chatter(2)
    b.user(
        "Good. One hard requirement from security: embeddings may not leave the EU, so any "
        "hosted option must have a Frankfurt or Dublin region."
    ).fact("eu", "may not leave the EU", form="security requirement").fact(
        "regions", "Frankfurt or Dublin", form="place names"
    )
    b.tool(
        "web_search",
        {"query": "managed postgres pgvector eu region"},
        page(b.rng, "en", 40),
    )
    b.user("Write it up as a one-pager for Thursday's architecture review.").fact(
        "onepager", "one-pager", form="deliverable format"
    )
    b.user("can you start with the recommendation section?")
    b.assistant("Sure, here's the recommendation section first.")
    return b.build(
        "## Goal\n- Pick a vector database for support-search: compare options and recommend "
        "one.\n## Constraints & Preferences\n- Four-person team; no new stateful service; "
        "already on Postgres 15.\n- Embeddings may not leave the EU: hosted options need "
        "Frankfurt or Dublin.\n- Deliverable: a one-pager for Thursday's architecture "
        "review.\n## Key Decisions\n- Recommend pgvector (HNSW since 0.5.0) for about two "
        "million embeddings."
    )


# -- held out: written after the extractor was tuned on the scenarios above -----------------


def coding_upgrade_en() -> Scenario:
    b = ScenarioBuilder("coding-upgrade-en", "en", "coding", "Django 3.2 to 4.2", SYSTEM_EN)
    b.user("hi, quick one (it won't be quick)").assistant("Ha. What is it?")
    b.user(
        "We're stuck on Django 3.2 and it's out of support. Get the shop project onto 4.2 LTS "
        "without breaking checkout."
    ).fact("goal", "onto 4.2 LTS", form="first substantive request, version in words")
    b.poll(
        "terminal",
        [{"command": f"pip install -r requirements/{n}.txt"} for n in ("base", "dev", "test") * 6],
        [
            "\n".join(
                f"Requirement already satisfied: pkg{j}=="
                f"{b.rng.randint(0, 9)}.{b.rng.randint(0, 30)}"
                for j in range(25)
            )
            for _ in range(18)
        ],
        acks=3,
    )
    b.tool(
        "terminal",
        {"command": "pip check"},
        "django-celery-beat 2.2.1 has requirement Django<4.0,>=2.2, but you have django 4.2.11.",
    ).fact("conflict", "django-celery-beat 2.2.1", form="package conflict in tool output")
    b.assistant(
        "pip check flags django-celery-beat: 2.2.1 pins Django below 4.0, so it has to move "
        "to 2.5.0 along with Django."
    ).fact("beat", "2.5.0", form="version in assistant reasoning")
    b.chatter(2)
    b.user(
        "Fine. Heads up, checkout can't be down for more than five minutes during the switch, "
        "marketing has a campaign running."
    ).fact("downtime", "more than five minutes", form="limit in words")
    b.tool(
        "terminal",
        {"command": "python manage.py test checkout"},
        pytest_output(b.rng, "checkout/tests.py", 80, failing="test_coupon_stacking")
        + "\nTypeError: Coupon.objects.filter() got an unexpected keyword argument "
        "'is_active__exact'",
    ).fact("failing", "test_coupon_stacking", form="failing test in tool output")
    b.user("Ruth owns the deploy pipeline, loop her in before anything touches prod.").fact(
        "ruth", "Ruth", form="a person's name"
    )
    b.poll(
        "read_file",
        [{"path": f"shop/apps/app_{i:02d}/models.py"} for i in range(14)],
        [
            "\n".join(f"    field_{j} = models.CharField(max_length={j + 10})" for j in range(40))
            for _ in range(14)
        ],
        acks=2,
    )
    b.user("staging is https://staging.shop.acme.test if you want to click around").fact(
        "staging", "https://staging.shop.acme.test", form="URL in a casual message"
    )
    b.user("what's the plan for the cutover?")
    b.assistant("Blue-green: deploy 4.2 next to 3.2, switch traffic, keep 3.2 warm for rollback.")
    return b.build(
        "## Goal\n- Get the shop project onto 4.2 LTS (from Django 3.2) without breaking "
        "checkout.\n## Critical Context\n- pip check: django-celery-beat 2.2.1 requires "
        "Django<4.0; upgrade it to 2.5.0.\n- test_coupon_stacking fails (TypeError on "
        "is_active__exact).\n## Constraints & Preferences\n- Checkout can't be down for more "
        "than five minutes.\n- Ruth owns the deploy pipeline: loop her in before prod.\n"
        "## Relevant Files\n- https://staging.shop.acme.test"
    )


def chat_moving_en() -> Scenario:
    b = ScenarioBuilder("chat-moving-en", "en", "chat", "moving flat with a cat", SYSTEM_EN)
    b.user("hello hello").assistant("Hi! What's up?")
    b.user("I'm moving flats at the end of the month and I'm panicking. Help me make a plan?")
    b.fact("goal", "moving flats", form="first substantive request")
    b.chatter(3)
    b.user("The new place is 14 Elm Court, flat 3B, third floor and there's no lift.").fact(
        "address", "14 Elm Court", form="an address"
    )
    b.tool(
        "web_search",
        {"query": "removal companies near me reviews"},
        "\n".join(
            f"{name} — from £{b.rng.randint(180, 900)} — {b.rng.uniform(3.1, 4.9):.1f} stars"
            for name in (
                "ShiftIt",
                "Two Guys & A Van",
                "Careful Movers",
                "BoxBros",
                "EasyMove",
                "Pronto Removals",
                "The Van Man",
                "Swift & Sons",
            )
        ),
    )
    b.distractor("ShiftIt", "a company not chosen")
    b.poll(
        "fetch",
        [{"url": f"https://reviews.example.co.uk/movers/{i}"} for i in range(10)],
        [page(b.rng, "en", 14) for _ in range(10)],
        acks=2,
    )
    b.user("booked Two Guys & A Van for the 28th, 8am start").fact(
        "movers", "Two Guys & A Van", form="company name"
    ).fact("date", "the 28th", form="date as an ordinal")
    b.user(
        "Biggest worry honestly is Miso, my cat. She's on thyroid meds, half a pill twice a "
        "day, and she hides for days when stressed."
    ).fact("meds", "half a pill twice a day", form="dosage in words")
    b.chatter(2)
    b.user(
        "Also the old landlord is holding a £1,150 deposit so I need to leave it spotless."
    ).fact("deposit", "£1,150", form="money")
    b.tool("web_search", {"query": "end of tenancy cleaning checklist"}, page(b.rng, "en", 60))
    b.user("ok, what should I do this week?")
    b.assistant("This week: start packing the rooms you use least and book the cleaner.")
    return b.build(
        "## Goal\n- Plan for moving flats at the end of the month.\n## Critical Context\n- New "
        "address: 14 Elm Court, flat 3B, third floor, no lift.\n- Movers: Two Guys & A Van, "
        "the 28th, 8am.\n- Cat Miso: thyroid meds, half a pill twice a day; hides when "
        "stressed.\n- Old landlord holds a £1,150 deposit: leave it spotless."
    )


def ops_backup_zh() -> Scenario:
    b = ScenarioBuilder("ops-backup-zh", "zh", "ops", "数据库备份修复", SYSTEM_ZH)
    b.user("你好，在忙吗").assistant("不忙，请说。")
    b.user("昨晚的数据库备份又没跑成功，帮我查一下，顺便把备份策略理一理。").fact(
        "goal", "备份策略理一理", form="第一条实质请求"
    )
    b.tool(
        "terminal",
        {"command": "journalctl -u restic-backup --since yesterday"},
        log_lines(b.rng, "restic", 80)
        + "\nFatal: unable to create lock in backend: repository is already locked by PID 2231",
    ).fact("lock", "repository is already locked", form="工具输出里的错误")
    b.assistant("备份仓库被一个旧进程锁住了，PID 2231 是前天没退出的那次备份。")
    b.poll(
        "terminal",
        [{"command": f"restic snapshots --host db-{i:02d}"} for i in range(16)],
        [
            "\n".join(
                f"{b.rng.getrandbits(32):08x}  2026-02-{d:02d} 03:00:0{d % 10}  "
                f"db-{i:02d}  /var/lib/mysql"
                for d in range(1, 9)
            )
            for i in range(16)
        ],
        acks=4,
    )
    b.user("备份统一放到 oss://bk-prod-shanghai 这个桶里，别再往本地盘写了。").fact(
        "bucket", "oss://bk-prod-shanghai", form="存储桶地址"
    )
    b.chatter(2)
    b.user("保留一个月就行，但是每个月一号那份要留一年。").fact(
        "keep", "每个月一号那份要留一年", form="口语化的保留规则"
    )
    b.user("还有，安全组要求备份必须开加密，密钥找阿杰要。").fact(
        "encrypt", "必须开加密", form="标记过的要求"
    ).fact("owner", "阿杰", form="人名")
    b.tool(
        "terminal",
        {"command": "restic unlock && restic backup /var/lib/mysql"},
        log_lines(b.rng, "restic", 40, level_mix=False) + "\nsnapshot 5f3c9a21 saved",
    )
    b.user("那以后恢复演练怎么安排？")
    b.assistant("建议每季度做一次恢复演练，记录耗时。")
    return b.build(
        "## Goal\n- 查昨晚备份失败的原因，并把备份策略理一理。\n## Critical Context\n- 失败原因："
        "repository is already locked（PID 2231 的旧进程）。\n## Constraints & Preferences\n- "
        "备份统一放到 oss://bk-prod-shanghai。\n- 保留一个月，每个月一号那份要留一年。\n"
        "- 必须开加密，"
        "密钥找阿杰要。"
    )


def research_thesis_zh() -> Scenario:
    b = ScenarioBuilder("research-thesis-zh", "zh", "research", "硕士论文相关工作", SYSTEM_ZH)
    b.user("老师好").assistant("你好！有什么可以帮你？")
    b.user("我在写硕士论文的相关工作一章，方向是中文医疗文本的实体识别，帮我梳理一下文献。").fact(
        "goal", "相关工作一章", form="第一条实质请求"
    )
    for query in ("中文 医疗 命名实体识别 综述", "BERT CRF 医疗 NER", "CMeEE 基准"):
        b.tool("web_search", {"query": query}, page(b.rng, "zh", 25))
    b.user("我们实验用的是 CMeEE 数据集，基线是 BERT-CRF。").fact(
        "dataset", "CMeEE", form="数据集名"
    ).fact("baseline", "BERT-CRF", form="方法名")
    b.chatter(2)
    b.poll(
        "fetch",
        [{"url": f"https://paper.example.cn/abs/{3000 + i}"} for i in range(12)],
        [page(b.rng, "zh", 16) for _ in range(12)],
        acks=3,
    )
    b.user("陈老师说这一章至少要八千字，引用尽量用近五年的。").fact(
        "length", "至少要八千字", form="中文数字的字数要求"
    ).fact("advisor", "陈老师", form="人名")
    b.assistant("好的，我会优先找 2021 年以后的论文。")
    b.user("学校查重要求低于百分之十五，别大段照抄摘要。").fact(
        "plag", "百分之十五", form="中文百分比"
    )
    b.user("初稿五月二十号前要交。").fact("due", "五月二十号", form="中文日期")
    b.tool("fetch", {"url": "https://paper.example.cn/abs/3999"}, page(b.rng, "zh", 50))
    b.user("先按什么结构写比较好？")
    b.assistant("可以按方法演进来写：规则与词典、统计模型、预训练模型。")
    return b.build(
        "## Goal\n- 写硕士论文相关工作一章：中文医疗文本的实体识别。\n"
        "## Constraints & Preferences\n"
        "- 陈老师：至少要八千字，引用尽量近五年。\n- 查重低于百分之十五。\n- 初稿五月二十号前交。\n"
        "## Critical Context\n- 数据集 CMeEE，基线 BERT-CRF。"
    )


SCENARIOS: tuple[Callable[[], Scenario], ...] = (
    ops_db_migration_en,
    ops_db_migration_zh,
    coding_refactor_en,
    coding_payment_zh,
    research_en,
    research_zh,
    chat_travel_en,
    chat_renovation_zh,
    ops_incident_en,
    ops_disk_zh,
    chat_speech_en,
    data_report_zh,
    chat_running_zh,
    ops_ci_en,
    coding_debug_en,
    ops_cert_zh,
    research_notes_en,
    coding_upgrade_en,
    chat_moving_en,
    ops_backup_zh,
    research_thesis_zh,
)
HELD_OUT: frozenset[str] = frozenset(
    {"coding-upgrade-en", "chat-moving-en", "ops-backup-zh", "research-thesis-zh"}
)
"""Scenarios written after the fallback's salience rules were tuned on the others: their
figures are reported separately, as the honest estimate for transcripts never seen."""


def load_scenarios(ids: list[str] | None = None) -> list[Scenario]:
    """Every scenario (or those whose id is in ``ids``; an unknown id raises ``ValueError``
    listing the known ones)."""
    built = [make() for make in SCENARIOS]
    if not ids:
        return built
    known = {s.id: s for s in built}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise ValueError(f"unknown scenario(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return [known[i] for i in ids]


__all__ = ["HELD_OUT", "SCENARIOS", "load_scenarios"]
