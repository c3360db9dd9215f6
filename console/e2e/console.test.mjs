// The console in a real browser: Debian's Chromium driven by playwright-core, against a real axd
// with mTLS, the browser presenting client certificates (the admin's as the PKCS#12 bundle that
// `axctl certs init` wrote, the viewer's as PEM), and the demo worker running the instances.
//
// Started by tests/tests/console_e2e.rs, which provides through the environment:
//   AX_CONSOLE_URL  https://localhost:PORT of axd's --console-listen
//   AX_CERTS        the directory of `axctl certs init --admin alice --viewer val`
//   AX_E2E_OUT      where screenshots go (target/console-e2e)
//   AX_CHROMIUM     the browser (/usr/bin/chromium)
//   NODE_EXTRA_CA_CERTS  the CA of AX_CERTS, so the server certificate is verified, not ignored
// Every wait polls a condition with a deadline; nothing sleeps and hopes.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { chromium } from "playwright-core";

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (run through tests/tests/console_e2e.rs)`);
  return v;
};
const URL_ = env("AX_CONSOLE_URL");
const CERTS = env("AX_CERTS");
const OUT = env("AX_E2E_OUT");
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
// Far from every zone the tasks use, so that "the task's zone and the browser's" differ on screen.
const BROWSER_ZONE = "America/New_York";
const LONG = 30_000;

mkdirSync(OUT, { recursive: true });
let browser;

before(async () => {
  browser = await chromium.launch({
    executablePath: env("AX_CHROMIUM"),
    // The flags this machine's closed network needs (no background connections, no QUIC).
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
});

after(async () => {
  await browser?.close();
});

/** A browser context presenting the identity `who`: `admin` (PKCS#12) or `viewer` (PEM). */
async function as(who, viewport = DESKTOP) {
  const origin = new URL(URL_).origin;
  const cert =
    who === "admin"
      ? {
          origin,
          pfxPath: join(CERTS, "admin-alice.p12"),
          passphrase: readFileSync(join(CERTS, "admin-alice.p12.pass"), "utf8").trim(),
        }
      : { origin, certPath: join(CERTS, "viewer-val.pem"), keyPath: join(CERTS, "viewer-val.key") };
  const ctx = await browser.newContext({ viewport, timezoneId: BROWSER_ZONE, clientCertificates: [cert] });
  const page = await ctx.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  return { ctx, page, errors };
}

async function open(page, path) {
  await page.goto(URL_ + path);
  await page.locator("h1").first().waitFor({ timeout: LONG });
}

/** Waits until the status line (role=status) under `scope` says something matching `re`. */
async function statusSays(scope, re) {
  const status = scope.locator('[role="status"]', { hasText: re }).first();
  await status.waitFor({ timeout: LONG });
  return (await status.innerText()).trim();
}

async function badge(page, name) {
  await page.locator("h1 .badge", { hasText: name }).waitFor({ timeout: LONG });
}

async function shot(page, name) {
  await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
}

/** Every form control and link has an accessible name, as Chromium computes it. */
async function namedControls(page, what) {
  const cdp = await page.context().newCDPSession(page);
  const { nodes } = await cdp.send("Accessibility.getFullAXTree");
  const roles = new Set(["textbox", "searchbox", "combobox", "button", "link", "checkbox", "radio", "spinbutton", "listbox"]);
  const unnamed = nodes
    .filter((n) => !n.ignored && roles.has(n.role?.value) && !String(n.name?.value ?? "").trim())
    .map((n) => n.role.value);
  assert.deepEqual(unnamed, [], `${what}: controls without an accessible name`);
  const controls = nodes.filter((n) => !n.ignored && roles.has(n.role?.value)).length;
  assert.ok(controls > 0, `${what}: no controls found`);
  await cdp.detach();
}

let echoInstance; // the instance the admin triggered, for the viewer's and the screenshots' pages

test("an admin creates and edits a task in the UI with axctl's validation messages, triggers it and watches it succeed", async () => {
  const { ctx, page, errors } = await as("admin");
  await open(page, "/tasks");
  await page.getByRole("link", { name: "New task" }).click();
  await page.getByLabel("Name", { exact: true }).fill("e2e-echo");
  await page.getByLabel("App", { exact: true }).fill("demo");
  await page.getByLabel("Handler", { exact: true }).fill("echo");
  await page.getByLabel("Cron expression").fill("0 25 * * *");
  await page.getByLabel("Timeout").fill("10x");
  await page.getByRole("button", { name: "Create task" }).click();
  // axctl's own words for a bad duration, before anything is sent...
  assert.match(await statusSays(page, /--timeout/), /--timeout: unknown unit `x`; use numbers with units ms, s, m, h, d/);
  await page.getByLabel("Timeout").fill("30s");
  await page.getByRole("button", { name: "Create task" }).click();
  // ...and axd's, as axctl prints them.
  assert.match(
    await statusSays(page, /InvalidArgument/),
    /InvalidArgument: task\.schedule\.cron\.expression: .*field 2 \(hours\) = 25 is out of range 0-23/,
  );
  await page.getByRole("radio", { name: "Manual" }).check();
  await page.getByLabel("Params (JSON)").fill('{"greeting":"hi"}');
  await page.getByRole("button", { name: "Create task" }).click();
  await page.waitForURL("**/tasks/e2e-echo", { timeout: LONG });
  assert.match(await statusSays(page, /Created/), /Created task e2e-echo\./);

  // Edit sends only what changed, and axctl's checks apply there too.
  await page.getByRole("link", { name: "Edit" }).click();
  await page.getByLabel("Description").fill("made in the browser");
  // The stored default backoff, written as axctl's --backoff takes it.
  const backoff = await page.getByLabel("Backoff").inputValue();
  assert.match(backoff, /^exp:10s:5m:/);
  await page.getByLabel("Backoff").fill("10s,1x");
  await page.getByRole("button", { name: "Save changes" }).click();
  assert.match(await statusSays(page, /--backoff/), /--backoff: unknown unit `x`/);
  await page.getByLabel("Backoff").fill(backoff);
  await page.getByRole("button", { name: "Save changes" }).click();
  await page.waitForURL("**/tasks/e2e-echo", { timeout: LONG });
  assert.match(await statusSays(page, /Saved/), /Saved task e2e-echo \(changed: description\)\./);
  assert.match(await page.locator(".facts").innerText(), /made in the browser/);
  // Disable and enable from the task list.
  await page.getByRole("link", { name: "Tasks", exact: true }).click();
  await page.getByRole("button", { name: "Disable e2e-echo" }).click();
  assert.match(await statusSays(page, /Disabled/), /Disabled e2e-echo\./);
  await page.getByRole("button", { name: "Enable e2e-echo" }).click();
  assert.match(await statusSays(page, /Enabled/), /Enabled e2e-echo\./);
  // Pause with a note, then resume.
  await page.getByRole("button", { name: "Pause e2e-echo" }).click();
  await page.getByLabel("Why pause e2e-echo").fill("maintenance window");
  await page.getByRole("form", { name: "Pause e2e-echo" }).getByRole("button", { name: "Pause", exact: true }).click();
  assert.match(await statusSays(page, /Paused/), /Paused e2e-echo\./);
  // The list reloads after the call answers: wait for the row to show the pause and its note.
  await page.locator("table").getByText("paused: maintenance window").waitFor({ timeout: LONG });
  await page.getByRole("button", { name: "Resume e2e-echo" }).click();
  assert.match(await statusSays(page, /Resumed/), /Resumed e2e-echo\./);
  await page.locator("table").getByText("paused: maintenance window").waitFor({ state: "detached", timeout: LONG });
  await page.getByRole("link", { name: "e2e-echo", exact: true }).click();
  await page.waitForURL("**/tasks/e2e-echo", { timeout: LONG });

  await page.getByLabel("Params for this run (JSON)").fill('{"greeting":"from the console"}');
  await page.getByLabel("Idempotency key").fill("e2e-1");
  await page.getByRole("button", { name: "Trigger", exact: true }).click();
  const said = await statusSays(page.locator("form.trigger"), /Triggered/);
  echoInstance = Number(/instance (\d+) created/.exec(said)[1]);
  // The same key again creates nothing.
  await page.getByRole("button", { name: "Trigger", exact: true }).click();
  assert.match(
    await statusSays(page.locator("form.trigger"), /exists/),
    new RegExp(`Instance ${echoInstance} exists for that idempotency key`),
  );
  await page.getByRole("link", { name: `Open instance ${echoInstance}` }).click();
  await badge(page, "SUCCESS");
  assert.match(await page.locator(".facts").innerText(), /from the console/);
  const steps = await page.locator(".timeline li").allInnerTexts();
  assert.deepEqual(
    steps.map((s) => /→\s*(\w+)/.exec(s)[1]),
    ["PENDING", "DISPATCHED", "RUNNING", "SUCCESS"],
    steps.join("\n"),
  );
  assert.ok(steps.slice(1).every((s) => /^\+/.test(s)), `each step after the first shows the time since the previous: ${steps}`);

  // The instances page filters by task, status and trigger time (axd filters).
  await page.getByRole("link", { name: "Instances" }).click();
  await page.getByLabel("Task").fill("e2e-echo");
  await page.getByLabel("Status").selectOption("SUCCESS");
  await page.getByRole("button", { name: "Filter" }).click();
  await page.getByRole("link", { name: String(echoInstance), exact: true }).waitFor({ timeout: LONG });
  assert.equal(await page.locator("tbody tr").count(), 1, "one SUCCESS instance of e2e-echo");
  await page.getByLabel(/Triggered from/).fill("2099-01-01T00:00:00");
  await page.getByRole("button", { name: "Filter" }).click();
  await page.getByText("No instance matches.").waitFor({ timeout: LONG });
  assert.match(page.url(), /from=2099-01-01T00%3A00/);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test("an admin cancels a running sleep instance, sees its log lines as they come, and retries it", async () => {
  const { ctx, page, errors } = await as("admin");
  await open(page, "/tasks/new");
  await page.getByLabel("Name", { exact: true }).fill("e2e-sleep");
  await page.getByLabel("App", { exact: true }).fill("demo");
  await page.getByLabel("Handler", { exact: true }).fill("sleep");
  await page.getByRole("radio", { name: "Manual" }).check();
  await page.getByLabel("Params (JSON)").fill('{"ms": 120000}');
  await page.getByRole("button", { name: "Create task" }).click();
  await page.waitForURL("**/tasks/e2e-sleep", { timeout: LONG });
  await page.getByRole("button", { name: "Trigger", exact: true }).click();
  await statusSays(page.locator("form.trigger"), /Triggered/);
  await page.getByRole("link", { name: /Open instance/ }).click();
  await badge(page, "RUNNING");
  await page.getByRole("log").getByText("sleeping 120000 ms").waitFor({ timeout: LONG });
  await page.getByLabel("Reason").fill("stopped from the e2e test");
  await page.getByRole("button", { name: "Cancel instance" }).click();
  await badge(page, "CANCELED");
  assert.match(await statusSays(page, /CANCELED/), /is CANCELED/);
  await page.locator(".timeline li", { hasText: "stopped from the e2e test" }).waitFor({ timeout: LONG });
  // Retry runs it again as a new attempt; cancel it once more.
  await page.getByRole("button", { name: "Retry instance" }).click();
  assert.match(await statusSays(page, /again/), /is PENDING again/);
  await badge(page, "RUNNING");
  await page.getByRole("button", { name: "Cancel instance" }).click();
  await badge(page, "CANCELED");
  assert.deepEqual(errors, []);
  await ctx.close();
});

test("a viewer sees the task and is refused a trigger with a visible message", async () => {
  const { ctx, page } = await as("viewer");
  await open(page, "/tasks/e2e-echo");
  await page.getByRole("button", { name: "Trigger", exact: true }).click();
  const said = await statusSays(page.locator("form.trigger"), /PermissionDenied/);
  // What axctl prints for the same call (`Code: message`).
  assert.equal(
    said,
    "PermissionDenied: permission denied: spiffe://ax/viewer/val has role viewer; this call needs role operator or higher",
  );
  await ctx.close();
});

test("one flow by keyboard alone: skip link, a task link, the trigger button", async () => {
  const { ctx, page } = await as("admin");
  await open(page, "/tasks");
  await page.getByRole("link", { name: "e2e-echo" }).waitFor({ timeout: LONG });
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Skip to content");
  /** Tabs until the focused element's accessible text matches `re` (at most 60 presses). */
  async function tabTo(re) {
    for (let i = 0; i < 60; i++) {
      await page.keyboard.press("Tab");
      const focused = await page.evaluate(() => {
        const el = document.activeElement;
        return { text: el?.textContent?.trim() ?? "", outline: el ? getComputedStyle(el).outlineStyle : "none" };
      });
      if (re.test(focused.text)) {
        assert.notEqual(focused.outline, "none", `the focus on ${focused.text} is visible`);
        return;
      }
    }
    throw new Error(`no focusable element matching ${re}`);
  }
  await tabTo(/^e2e-echo$/);
  await page.keyboard.press("Enter");
  await page.waitForURL("**/tasks/e2e-echo", { timeout: LONG });
  await tabTo(/^Trigger$/);
  await page.keyboard.press("Enter");
  assert.match(await statusSays(page.locator("form.trigger"), /Triggered/), /instance \d+ created/);
  await ctx.close();
});

test("every page: controls are named for screen readers, and a screenshot at 1280x800 and at phone width", async () => {
  assert.ok(echoInstance, "the first test triggered an instance");
  const { ctx, page, errors } = await as("admin");
  const pages = [
    ["tasks", "/tasks", "hello"],
    ["task-detail", "/tasks/hello", "Workers now:"],
    ["task-form", "/tasks/new", "Schedule"],
    ["instances", "/instances", "e2e-echo"],
    ["instance-detail", `/instances/${echoInstance}`, "SUCCESS"],
    ["workers", "/workers", "demo"],
    ["cluster", "/cluster", "SERVING"],
    ["alerts", "/alerts", "demo-failures"],
    ["calendars", "/calendars", "2026-12-25"],
    ["limits", "/limits", "50"],
    ["audit", "/audit", "CreateTask"],
    ["code", "/code", "Load the stored tasks"],
  ];
  for (const [name, path, shows] of pages) {
    await open(page, path);
    await page.locator("main").getByText(shows).first().waitFor({ timeout: LONG });
    await namedControls(page, name);
    await shot(page, name);
  }
  assert.deepEqual(errors, []);
  await ctx.close();
  const phone = await as("admin", PHONE);
  for (const [name, path, shows] of [
    ["phone-tasks", "/tasks", "hello"],
    ["phone-instance-detail", `/instances/${echoInstance}`, "SUCCESS"],
  ]) {
    await open(phone.page, path);
    await phone.page.locator("main").getByText(shows).first().waitFor({ timeout: LONG });
    // Nothing wider than the phone: the tables turned into cards.
    const overflow = await phone.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `${name} scrolls sideways by ${overflow}px`);
    await shot(phone.page, name);
  }
  await phone.ctx.close();
});

test("the root opens the task list, and a fixed rate reads as it was set", async () => {
  const { ctx, page, errors } = await as("admin");
  // The first load of the root: the task list, at its own address.
  await page.goto(URL_ + "/");
  await page.locator("h1", { hasText: "Tasks" }).waitFor({ timeout: LONG });
  assert.ok(page.url().endsWith("/tasks"), `the address of the root's page: ${page.url()}`);
  await page.getByRole("link", { name: "New task" }).click();
  await page.getByLabel("Name", { exact: true }).fill("e2e-tick");
  await page.getByLabel("App", { exact: true }).fill("quiet");
  await page.getByLabel("Handler", { exact: true }).fill("none");
  await page.getByRole("radio", { name: "Fixed rate" }).check();
  await page.getByLabel("Every").fill("3s");
  // Several schedules: more fires merged with the task's own.
  await page.getByLabel("Also fires on", { exact: true }).fill("cron 0 0 9 * * * in Europe/Berlin; every 1h");
  await page.getByLabel("Enabled (fires by itself)").uncheck();
  await page.getByRole("button", { name: "Create task" }).click();
  await page.waitForURL("**/tasks/e2e-tick", { timeout: LONG });
  const facts = await page.locator(".facts").innerText();
  assert.match(facts, /every 3s\b/, `the schedule as set: ${facts}`);
  assert.match(facts, /Also fires on\s+cron 0 0 9 \* \* \* in Europe\/Berlin; every 1h/, `the extra schedules: ${facts}`);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test("a run's page, from an instance that a chain created", async () => {
  const { ctx, page, errors } = await as("admin");
  // hello chains to hello-next on each success: its instance belongs to the run of hello's.
  await open(page, "/instances?task=hello-next");
  const first = page.locator("main table a", { hasText: /^\d+$/ }).first();
  await first.waitFor({ timeout: LONG });
  await first.click();
  await page.locator("dt", { hasText: "Run" }).waitFor({ timeout: LONG });
  await page.locator("dt:text-is('Run') + dd a").click();
  await page.locator("h1", { hasText: /^Run \d+/ }).waitFor({ timeout: LONG });
  await page.locator("main table").getByText("hello-next").first().waitFor({ timeout: LONG });
  await page.locator("main table").getByText("on success").first().waitFor({ timeout: LONG });
  const text = await page.locator("main").innerText();
  assert.match(text, /hello-next/, `the run lists the chained instance: ${text}`);
  assert.match(text, /hello\b/, `and the instance that chained it: ${text}`);
  assert.match(text, /on success/, `with the edge between them: ${text}`);
  await namedControls(page, "run");
  await shot(page, "run");
  assert.deepEqual(errors, []);
  await ctx.close();
});

test("bulk actions from the instance list: a count, a confirmation, then the change", async () => {
  const { ctx, page, errors } = await as("admin");
  // Three instances of a task nobody serves, PENDING until canceled here.
  await page.goto(URL_ + "/tasks/new");
  await page.getByLabel("Name", { exact: true }).fill("e2e-bulk");
  await page.getByLabel("App", { exact: true }).fill("nobody");
  await page.getByLabel("Handler", { exact: true }).fill("none");
  await page.getByRole("radio", { name: "Manual" }).check();
  await page.getByLabel("Params (JSON)", { exact: true }).fill('{"n": 1}');
  await page.getByLabel("Search params", { exact: true }).fill("params.n");
  await page.getByRole("button", { name: "Create task" }).click();
  await page.waitForURL("**/tasks/e2e-bulk", { timeout: LONG });
  const said = page.locator("form.trigger [role=status]");
  let last = "";
  for (let i = 0; i < 3; i++) {
    await page.getByRole("button", { name: "Trigger", exact: true }).click();
    // Each trigger's own answer (a new instance each time: no idempotency key).
    const until = Date.now() + LONG;
    for (;;) {
      const text = (await said.count()) ? (await said.first().innerText()).trim() : "";
      if (/created/.test(text) && text !== last) {
        last = text;
        break;
      }
      if (Date.now() > until) throw new Error(`trigger ${i + 1} was not answered: ${text}`);
      await page.waitForTimeout(50);
    }
  }
  // The filters by a params field (the task's search params) and by tag.
  await open(page, "/instances?param=n%3D2");
  await page.locator("main").getByText("No instance matches.").waitFor({ timeout: LONG });
  await open(page, "/instances?tag=oops");
  await page.locator("main").getByText("Tags: `oops`: expected KEY=VALUE").waitFor({ timeout: LONG });
  await open(page, "/instances?task=e2e-bulk&status=PENDING&param=n%3D1");
  await page.locator("main table").getByText("e2e-bulk").first().waitFor({ timeout: LONG });
  assert.equal(await page.locator("main table tbody tr").count(), 3, "the three instances whose params.n is 1");
  const bulk = page.locator("form.bulk");
  await bulk.getByRole("button", { name: "Cancel matching..." }).click();
  assert.match(await statusSays(bulk, /match/), /^3 instance\(s\) match; 3 would be canceled, 0 skipped/);
  // Counting changed nothing.
  await open(page, "/instances?task=e2e-bulk&status=PENDING");
  await page.locator("main table").getByText("e2e-bulk").first().waitFor({ timeout: LONG });
  await bulk.getByRole("button", { name: "Cancel matching..." }).click();
  await statusSays(bulk, /would be canceled/);
  await shot(page, "instances-bulk");
  await bulk.getByRole("button", { name: "Confirm: cancel 3 instance(s)" }).click();
  assert.match(await statusSays(bulk, /canceled \d/), /^canceled 3 instance\(s\); 3 matched, 0 skipped/);
  await page.locator("main").getByText("No instance matches.").waitFor({ timeout: LONG });
  assert.deepEqual(errors, []);
  await ctx.close();
});

test("the task form sets every field axctl does, and the task page shows them", async () => {
  const { ctx, page, errors } = await as("admin");
  await open(page, "/tasks/new");
  const fill = async (label, value) => page.getByLabel(label, { exact: true }).fill(value);
  await fill("Name", "e2e-full");
  await fill("App", "quiet");
  await fill("Handler", "none");
  await page.getByRole("radio", { name: "Manual" }).check();
  await fill("Params (JSON)", '{"customer_id": 1, "order": 2}');
  const advanced = [
    ["Worker selector", "zone in (a,b)"],
    ["Priority", "3"],
    ["Max running", "2"],
    ["Max pending", "7"],
    ["Cooldown after", "4"],
    ["Cooldown", "5x"],
    ["Concurrency key", "params.customer_id"],
    ["Concurrency limit", "1"],
    ["Unique key", "params.order"],
    ["Unique for", "10m"],
    ["Search params", "params.customer_id"],
    ["Active until", "2030-01-01T00:00:00Z"],
    ["Excluded dates", "2026-12-25"],
    ["Calendar", "holidays"],
    ["Must finish within", "1h"],
    ["On event", "order.paid"],
    ["Event filter", "payload.vip"],
    ["On success", "hello-next"],
  ];
  for (const [label, value] of advanced) await fill(label, value);
  // axctl's syntax check, naming its flag, before anything is sent.
  await page.getByRole("button", { name: "Create task" }).click();
  assert.match(await statusSays(page.locator("form.task-form"), /cooldown/), /--cooldown: unknown unit `x`/);
  await fill("Cooldown", "30s");
  await page.getByRole("button", { name: "Create task" }).click();
  await page.waitForURL("**/tasks/e2e-full", { timeout: LONG });
  const facts = await page.locator(".facts").innerText();
  for (const shown of [
    /Worker selector\s+zone in \(a,b\)/,
    /Priority\s+3/,
    /Max running\s+2/,
    /Max pending\s+7/,
    /Cooldown after\s+4 failures/,
    /Cooldown\s+30s/,
    /Concurrency key\s+params\.customer_id \(at most 1 running per value\)/,
    /Unique key\s+params\.order for 10m/,
    /Search params\s+params\.customer_id/,
    /Active until\s+2030-01-01T00:00:00\.000Z/,
    /Excluded dates\s+2026-12-25/,
    /Calendar\s+holidays/,
    /Must finish within\s+1h/,
    /On event\s+order\.paid where payload\.vip/,
    /On success\s+hello-next/,
  ]) {
    assert.match(facts, shown, `the task page shows what was set: ${facts}`);
  }
  // An edit of one of them sends only that field.
  await page.getByRole("link", { name: "Edit" }).click();
  await page.getByLabel("Priority", { exact: true }).waitFor({ timeout: LONG });
  assert.equal(await page.getByLabel("Priority", { exact: true }).inputValue(), "3", "the form reads the stored value");
  await fill("Priority", "5");
  await page.getByRole("button", { name: "Save changes" }).click();
  await page.waitForURL("**/tasks/e2e-full", { timeout: LONG });
  assert.match(await statusSays(page, /Saved/), /changed: priority\)/);
  assert.match(await page.locator(".facts").innerText(), /Priority\s+5/);
  await namedControls(page, "task-full");
  assert.deepEqual(errors, []);
  await ctx.close();
});

test("tasks as code: the stored tasks load as a set that plans no change; a new set is planned, then applied", async () => {
  const { ctx, page, errors } = await as("admin");
  await open(page, "/tasks");
  await page.getByRole("link", { name: "Tasks as code" }).click();
  await page.getByRole("button", { name: "Load the stored tasks" }).click();
  const set = page.getByLabel("Task set (JSON)", { exact: true });
  await statusSays(page, /Loaded/);
  const exported = JSON.parse(await set.inputValue());
  assert.ok(exported.tasks.some((t) => t.name === "hello" && t.schedule), `the export holds the stored tasks: ${exported.tasks.length}`);
  await page.getByRole("button", { name: "Plan", exact: true }).click();
  assert.match(await statusSays(page, /No changes|Plan|Error|:/), /^No changes: \d+ task\(s\) as the set says\.$/);
  assert.ok(await page.getByRole("button", { name: "Apply", exact: true }).isDisabled(), "nothing to apply");
  // A value axd refuses names the task and the field, and nothing is created.
  await set.fill(JSON.stringify({ tasks: [{ name: "e2e-code-bad", app: "quiet", handler: "none", schedule: { cron: { expression: "61 * * * *" } } }] }));
  await page.getByRole("button", { name: "Plan", exact: true }).click();
  assert.match(await statusSays(page, /InvalidArgument/), /task "e2e-code-bad": field schedule\.cron\.expression: /);
  // A new task: planned, then applied with a note.
  await set.fill(JSON.stringify({ tasks: [{ name: "e2e-code", app: "quiet", handler: "none", schedule: { manual: {} } }] }));
  await page.getByLabel("Change note", { exact: true }).fill("from the console test");
  await page.getByRole("button", { name: "Plan", exact: true }).click();
  assert.match(await statusSays(page, /Plan:/), /Plan: 1 to create, 0 to update, 0 to delete, 0 unchanged\./);
  assert.match(await page.locator("main table").innerText(), /\+ create\s+e2e-code\s+quiet/);
  await shot(page, "code-plan");
  await page.getByRole("button", { name: "Apply", exact: true }).click();
  assert.match(await statusSays(page, /Applied/), /Applied: 1 created, 0 updated, 0 deleted, 0 unchanged\./);
  await open(page, "/tasks/e2e-code");
  await page.locator("main").getByText("manual").first().waitFor({ timeout: LONG });
  await namedControls(page, "code");
  assert.deepEqual(errors, []);
  await ctx.close();
});
