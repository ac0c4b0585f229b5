// End-to-end test of the VS Code extension in a real VS Code (code-server) driven by a real Chromium.
//
//   CODE_SERVER=... VSIX=... CHROMIUM=/usr/bin/chromium DG_PYTHON=.venv/bin/python DG_MODEL=<dir or empty> \
//     node editors/vscode/test/e2e.mjs
//
// Installs the .vsix into a fresh code-server, opens a Python file, waits for the daemon's model to load
// (status bar), types, asserts that the daemon's ghost text appears and that Tab inserts exactly it, checks
// the status bar latency, pausing and resuming suggestions ("Toggle suggestions": nothing shown while paused,
// even when asked), the "Show log" command and the rewrite commands in the palette. Then the code
// actions: selects a range with a syntax error and a `pass  # TODO` hole in a second file, opens VS Code's own
// code-action menu (Ctrl+. = "Quick Fix...", and "Refactor..."), reads its rows from the DOM, asserts the
// dgcomplete titles are listed, picks actions one by one (Repair syntax first) until one applies an edit, and
// asserts after each pick that the file outside the selected range is byte-for-byte unchanged (an action the
// model has no edit for must say so in a notification and change nothing).
// Screenshots: .test-artifacts/vscode-ghost-text.png, .test-artifacts/vscode-code-actions.png
// (UPDATE_SCREENSHOT=1 also copies the second to editors/vscode/code-actions.png; the README's ghost-text picture,
// editors/vscode/screenshot.png, shows the shipped model instead of the memorizer: screenshot.mjs).
import fs from "node:fs";
import path from "node:path";

import { ART, checker, env, launch, MODEL, prepareRun, quickOpen, root, runCommand, runMain, sleep, stopCodeServer,
  TYPING_SETTINGS, VSIX } from "./util.mjs";

const WORK = path.join(ART, "vscode");
const SHOT = path.join(ART, "vscode-ghost-text.png");
const ACTIONS_SHOT = path.join(ART, "vscode-code-actions.png");
const TIMEOUT_MS = Number(env("DG_E2E_TIMEOUT_MS", "420000"));

const log = (...a) => console.error("[vscode-e2e]", ...a);
const { checks, check } = checker(log);

// open a workspace file through Quick Open and wait until the editor shows `marker`
async function openFile(page, name, marker) {
  await quickOpen(page, name);
  await page.locator(".editor-instance .monaco-editor").first().waitFor({ state: "visible" });
  await page.waitForSelector(`.tab.active[aria-label*='${name}'], .tab.active[title*='${name}']`, { timeout: 30000 })
    .catch(() => undefined);
  const opened = await page.waitForFunction((m) => [...document.querySelectorAll(".editor-instance .view-lines")]
    .some((e) => (e.textContent || "").replace(/\u00a0/g, " ").includes(m)), marker, { timeout: 30000 })
    .catch(() => null);
  check(`${name} open`, !!opened);
}

async function main() {
  const dirs = prepareRun(WORK, {
    ...TYPING_SETTINGS,
    "dgcomplete.modelPath": MODEL,
    "dgcomplete.maxLines": 4,
    "dgcomplete.statsIntervalSeconds": 5,
  });
  const { ws } = dirs;

  // a file the memorizer has seen (tests/helpers.py MEMO_TEXT); we type the start of a word it knows
  const original = 'def add(a, b):\n    return a + b\n\n\ndef greet(name):\n    message = "hello " + name\n' +
    "    print(message)\n    return ";
  const file = path.join(ws, "sample.py");
  fs.writeFileSync(file, original);
  // for the code actions: the selection (lines SEL_FIRST..SEL_LAST, whole lines) has an unclosed call and a
  // hole, so the server offers Rewrite selection (variants), Repair syntax and Fill holes; lines around it
  // must never change
  const rwLines = ["def add(a, b):", "    return a + b", "", "", "def greet(name):", '    message = "hello " + name',
    "    print(message", "    pass  # TODO", "    return message", "", "", "class Counter:", "    def __init__(self):",
    "        self.count = 0", ""];
  const SEL_FIRST = 4;
  const SEL_LAST = 7;
  const rwOriginal = rwLines.join("\n");
  const rwFile = path.join(ws, "rewrite.py");
  fs.writeFileSync(rwFile, rwOriginal);
  const selStart = rwLines.slice(0, SEL_FIRST).join("\n").length + 1; // offsets of the selected range
  const selEnd = rwLines.slice(0, SEL_LAST + 1).join("\n").length + 1; // (end: the start of line SEL_LAST + 1)
  const rwBefore = rwOriginal.slice(0, selStart);
  const rwAfter = rwOriginal.slice(selEnd);

  log("installing", path.relative(root, VSIX));
  const { cs, browser, page } = await launch(dirs, WORK, check);
  try {
    check("workbench loaded", true);
    await sleep(1500);

    // open sample.py through Quick Open
    await openFile(page, "sample.py", "def greet");
    const editor = page.locator(".editor-instance .monaco-editor").first();

    // the daemon loads its model: the status bar item goes from spinning to sparkle
    const dgState = () => page.evaluate(() => {
      const item = [...document.querySelectorAll(".statusbar-item")]
        .find((e) => /dgcomplete|dg \d+ ms/.test(e.textContent || ""));
      if (!item) return "absent";
      for (const [cls, st] of [["codicon-sparkle", "ready"], ["codicon-error", "error"], ["codicon-circle-slash", "stopped"]]) {
        if (item.querySelector("." + cls)) return st;
      }
      return "loading";
    });
    const ready = await page.waitForFunction(() => {
      const item = [...document.querySelectorAll(".statusbar-item")]
        .find((e) => /dgcomplete|dg \d+ ms/.test(e.textContent || ""));
      return !!item && !!item.querySelector(".codicon-sparkle, .codicon-error, .codicon-circle-slash");
    }, null, { timeout: 180000 }).catch(() => null);
    check("status bar shows ready", ready && (await dgState()) === "ready", await dgState());
    await sleep(300);

    // type at the end of the file
    await editor.click();
    await page.keyboard.press("Control+End");
    const ghostSel = ".monaco-editor .ghost-text-decoration, .monaco-editor .ghost-text-decoration-preview, .monaco-editor .ghost-text";
    let typed = "";
    let ghost = null;
    for (const [i, chunk] of ["mess", "age", " "].entries()) {
      await page.keyboard.type(chunk, { delay: 60 });
      typed += chunk;
      ghost = await page.waitForSelector(ghostSel, { timeout: i === 0 ? 30000 : 15000 }).catch(() => null);
      if (!ghost) {
        log(`no ghost text after typing ${JSON.stringify(chunk)}; triggering explicitly`);
        await page.keyboard.press("Alt+Backslash"); // editor.action.inlineSuggest.trigger
        ghost = await page.waitForSelector(ghostSel, { timeout: 15000 }).catch(() => null);
      }
      if (ghost) break;
    }
    check("ghost text appears", !!ghost);
    await sleep(400); // let the decoration settle (it is re-rendered once the request resolves)
    const readGhost = () => page.evaluate(() => {
      const ed = document.querySelector(".editor-instance .monaco-editor");
      const inline = [...ed.querySelectorAll(".ghost-text-decoration, .ghost-text-decoration-preview")]
        .map((e) => e.textContent).join("");
      const zone = [...ed.querySelectorAll(".ghost-text .view-line")].map((e) => e.textContent);
      return [inline, ...zone].join("\n").replace(/\u00a0/g, " ");
    });
    const ghostText = await readGhost();
    check("ghost text is non-empty", ghostText.trim().length > 0, ghostText);
    await page.screenshot({ path: SHOT });
    log("screenshot", path.relative(root, SHOT));

    // Tab accepts: the file gains exactly the ghost text after what was typed
    await page.keyboard.press("Tab");
    await sleep(300);
    await page.keyboard.press("Control+S");
    const expected = original + typed + ghostText;
    let after = "";
    const t0 = Date.now();
    while (Date.now() - t0 < 10000) {
      after = fs.readFileSync(file, "utf8");
      if (after !== original) break;
      await sleep(200);
    }
    check("Tab inserts exactly the ghost text", after === expected, { after: after.slice(-80), expected: expected.slice(-80) });

    // the accept command reached the server, and the status bar shows the latency it polled
    const lat = await page.waitForFunction(() => {
      const items = [...document.querySelectorAll(".statusbar-item")].map((e) => e.textContent || "");
      return items.find((t) => /dg \d+ ms/.test(t)) || false;
    }, null, { timeout: 15000 }).then((h) => h.jsonValue()).catch(() => null);
    check("status bar shows the last latency", !!lat, lat);

    // pausing: "Toggle suggestions" shows the pause sign in the status bar, and while paused nothing is shown,
    // even when asked (Alt+\\), where ghost text just was; toggled again, it comes back
    await page.keyboard.press("Control+Z"); // back to what was typed before the accept, the cursor after it
    await sleep(300);
    const ghostNow = async (ms) => page.waitForSelector(ghostSel, { timeout: ms }).then(() => true).catch(() => false);
    const pauseSign = (on) => page.waitForFunction((want) => [...document.querySelectorAll(".statusbar-item")]
      .some((e) => /dgcomplete/.test(e.textContent || "") && !!e.querySelector(".codicon-debug-pause") === want),
    on, { timeout: 15000 }).then(() => true).catch(() => false);
    const retypeLast = async () => { // the same keys at the same place, as a user would type them again
      await editor.click();
      await page.keyboard.press("Control+End");
      await page.keyboard.press("Backspace");
      await page.keyboard.type(typed.slice(-1), { delay: 60 });
    };
    await page.keyboard.press("Escape");
    await runCommand(page, "dgcomplete: Toggle suggestions (pause / resume)");
    check("status bar shows suggestions paused", await pauseSign(true));
    await retypeLast();
    await page.keyboard.press("Alt+Backslash");
    check("no ghost text while paused", !(await ghostNow(5000)));
    await runCommand(page, "dgcomplete: Toggle suggestions (pause / resume)");
    check("status bar shows ready again", await pauseSign(false));
    await retypeLast();
    let resumed = await ghostNow(20000);
    if (!resumed) {
      await page.screenshot({ path: path.join(ART, "vscode-resume-debug.png") });
      await page.keyboard.press("Alt+Backslash");
      resumed = await ghostNow(15000);
    }
    check("ghost text again once resumed", resumed);
    if (resumed) {
      // accept next word (Ctrl+Right, VS Code's own command; the README's advice): the file gains the start of the
      // ghost text (our items' range begins at the typed word); undone after, so the steps below see the same text
      await sleep(400);
      const shown = await readGhost();
      const saved = fs.readFileSync(file, "utf8");
      await page.keyboard.press("Control+ArrowRight");
      await sleep(300);
      await page.keyboard.press("Control+S");
      let now = saved;
      const t1 = Date.now();
      while (Date.now() - t1 < 5000 && now === saved) {
        await sleep(200);
        now = fs.readFileSync(file, "utf8");
      }
      const base = original + typed;
      const part = now.startsWith(base) ? now.slice(base.length) : null;
      // (a one-word ghost text is taken whole; of a longer one, less than all)
      const words = shown.trim().split(/[^\w$]+/).filter(Boolean).length;
      check("Ctrl+Right accepts the start of the ghost text", part !== null && part.trim().length > 0
        && shown.startsWith(part) && (words <= 1 || part.length < shown.length), { part, shown });
      await page.keyboard.press("Control+Z");
      await sleep(300);
    }
    await page.keyboard.press("Escape");
    await page.keyboard.press("Control+S");

    // "dgcomplete: Show log" reveals the output channel
    await page.keyboard.press("Control+Shift+P");
    await page.waitForSelector(".quick-input-widget input", { state: "visible" });
    await page.keyboard.type("dgcomplete: Show log", { delay: 20 });
    await page.waitForSelector(".quick-input-list .monaco-list-row:has-text('Show log')");
    await sleep(300);
    await page.keyboard.press("Enter");
    const out = await page.waitForFunction(() => {
      const p = document.querySelector(".part.panel .output-view, .part.panel");
      const t = (p && p.textContent || "").replace(/\u00a0/g, " ");
      return /starting: .*dgcomplete serve/.test(t) ? t.slice(t.indexOf("starting"), t.indexOf("starting") + 60) : false;
    }, null, { timeout: 15000 }).then((h) => h.jsonValue()).catch(() => null);
    check("Show log reveals the output channel", !!out, out);

    // the rewrite commands are in the command palette
    await page.keyboard.press("Control+Shift+P");
    await page.waitForSelector(".quick-input-widget input", { state: "visible" });
    await page.keyboard.type("dgcomplete: ", { delay: 20 });
    const listed = await page.waitForFunction(() => {
      const rows = [...document.querySelectorAll(".quick-input-list .monaco-list-row")].map((e) => e.textContent || "");
      const want = ["Rewrite selection", "Repair syntax", "Fill holes"];
      return want.every((w) => rows.some((r) => r.includes(w))) ? rows.length : false;
    }, null, { timeout: 15000 }).then((h) => h.jsonValue()).catch(() => null);
    check("rewrite commands in the command palette", !!listed, listed);
    await page.keyboard.press("Escape");

    // ---- code actions in VS Code's own code-action menu -----------------------------------------------------
    if (await page.locator(".part.panel").isVisible().catch(() => false)) {
      await page.keyboard.press("Control+J"); // hide the panel (the output channel) again
      await page.locator(".part.panel").waitFor({ state: "hidden", timeout: 5000 }).catch(() => undefined);
    }
    await openFile(page, "rewrite.py", "class Counter");
    const rwEditor = page.locator(".editor-instance .monaco-editor").first();
    const selectRange = async () => {
      await page.keyboard.press("Escape");
      await rwEditor.click({ position: { x: 200, y: 10 } });
      await page.keyboard.press("Control+Home");
      for (let i = 0; i < SEL_FIRST; i++) await page.keyboard.press("ArrowDown");
      for (let i = SEL_FIRST; i <= SEL_LAST; i++) await page.keyboard.press("Shift+ArrowDown");
      // the status bar says what is selected: "Ln 9, Col 1 (96 selected)"
      return page.waitForFunction((n) => {
        const t = document.getElementById("status.editor.selection")?.textContent || "";
        return t.includes(`(${n} selected)`) ? t : false;
      }, selEnd - selStart, { timeout: 10000 }).then((h) => h.jsonValue()).catch(async () =>
        page.evaluate(() => document.getElementById("status.editor.selection")?.textContent || "?"));
    };
    const selStatus = await selectRange();
    check("range selected", new RegExp(`\\(${selEnd - selStart} selected\\)`).test(selStatus), selStatus);

    const menuRows = () => page.evaluate(() => [...document.querySelectorAll(".action-widget .monaco-list-row")]
      .filter((e) => !e.classList.contains("group-header"))
      .map((e) => (e.getAttribute("aria-label") || e.textContent || "").replace(/\u00a0/g, " ").trim()));
    // the menu fills in once the (cheap) textDocument/codeAction answers arrive
    const openMenu = async (how, want) => {
      if (how === "quickfix") await page.keyboard.press("Control+Period");
      else await runCommand(page, how);
      return page.waitForFunction((w) => {
        const rows = [...document.querySelectorAll(".action-widget .monaco-list-row")]
          .map((e) => (e.getAttribute("aria-label") || e.textContent || "").replace(/\u00a0/g, " ").trim());
        return w.every((x) => rows.some((r) => r.includes(x))) ? rows : false;
      }, want, { timeout: 20000 }).then((h) => h.jsonValue()).catch(() => null);
    };
    const allTitles = ["dgcomplete: Rewrite selection", "dgcomplete: Repair syntax", "dgcomplete: Fill holes"];
    const rows = await openMenu("quickfix", allTitles);
    if (!rows) log("Quick Fix menu rows:", JSON.stringify(await menuRows()));
    check("Quick Fix menu (Ctrl+.) lists the dgcomplete code actions", !!rows, rows);
    await page.screenshot({ path: ACTIONS_SHOT });
    log("screenshot", path.relative(root, ACTIONS_SHOT));
    await page.keyboard.press("Escape");
    await page.waitForSelector(".action-widget .monaco-list-row", { state: "detached", timeout: 5000 }).catch(() => undefined);

    // "Refactor..." asks for refactor.* only: Rewrite selection and Fill holes (refactor.rewrite), no quick fix
    await selectRange();
    const refactorRows = await openMenu("Refactor...", ["dgcomplete: Rewrite selection", "dgcomplete: Fill holes"]);
    check("Refactor... menu lists Rewrite selection and Fill holes, not Repair syntax",
      !!refactorRows && !refactorRows.some((r) => r.includes("Repair syntax")), refactorRows);
    await page.keyboard.press("Escape");
    await page.waitForSelector(".action-widget .monaco-list-row", { state: "detached", timeout: 5000 }).catch(() => undefined);

    // pick actions from the Quick Fix menu: Repair syntax, Fill holes, then the Rewrite variants, until one
    // applies an edit. Each pick resolves the action (codeAction/resolve, the model runs), VS Code applies the
    // edit it carries; with no edit the server says why (window/showMessage → a notification).
    const offered = rows.map((r) => (r.match(/dgcomplete: (?:Repair syntax|Fill holes|Rewrite selection(?: \(variant \d+\))?)/)
      || [])[0]).filter(Boolean);
    const order = ["Repair syntax", "Fill holes", "Rewrite selection"]
      .flatMap((t) => offered.filter((x) => x.startsWith(`dgcomplete: ${t}`)));
    const picks = [];
    for (const title of order) {
      const base = title.replace(/ \(variant \d+\)$/, "");
      await runCommand(page, "Notifications: Clear All Notifications"); // only this pick's messages count
      await selectRange();
      const got = await openMenu("quickfix", [title]);
      if (!got) throw new Error(`the Quick Fix menu lost ${title}: ${JSON.stringify(await menuRows())}`);
      // as a user would with the keyboard (the menu sits under a pointer-blocking overlay for clicks): move the
      // focus down to the row, Enter
      let focusedRow = "";
      for (let i = 0; i < 12; i++) {
        focusedRow = await page.evaluate(() => (document.querySelector(".action-widget .monaco-list-row.focused")
          ?.textContent || "").replace(/\u00a0/g, " "));
        if (focusedRow.includes(title)) break;
        await page.keyboard.press("ArrowDown");
        await sleep(60);
      }
      if (!focusedRow.includes(title)) throw new Error(`cannot focus ${title} in the menu (at ${focusedRow})`);
      await page.keyboard.press("Enter");
      // an applied edit makes the editor dirty, or is already on disk (files.refactoring.autoSave, on by default,
      // saves files a code action's workspace edit touched)
      let outcome = null;
      const t0 = Date.now();
      while (!outcome && Date.now() - t0 < 90000) {
        if (fs.readFileSync(rwFile, "utf8") !== rwOriginal) outcome = { kind: "edit", saved: "by VS Code" };
        else {
          outcome = await page.evaluate((b) => {
            if (document.querySelector(".tab.active")?.classList.contains("dirty")) return { kind: "edit" };
            const msgs = [...document.querySelectorAll(".notifications-toasts .notification-list-item-message")]
              .map((e) => (e.textContent || "").replace(/\u00a0/g, " ").trim());
            const msg = msgs.find((t) => t.startsWith(b + ": "));
            return msg ? { kind: "message", msg } : null;
          }, base);
        }
        if (!outcome) await sleep(200);
      }
      check(`${title}: picked from the menu, an edit or a message`, !!outcome, outcome);
      if (outcome.kind === "edit" && !outcome.saved) {
        await sleep(300);
        await page.keyboard.press("Control+S");
      }
      let now = rwOriginal;
      const t1 = Date.now();
      while (Date.now() - t1 < (outcome.kind === "edit" ? 10000 : 1500)) {
        now = fs.readFileSync(rwFile, "utf8");
        if (now !== rwOriginal) break;
        await sleep(200);
      }
      const inside = now.length >= rwBefore.length + rwAfter.length && now.startsWith(rwBefore) && now.endsWith(rwAfter)
        ? now.slice(rwBefore.length, now.length - rwAfter.length) : null;
      picks.push({ title, outcome: outcome.kind, detail: outcome.msg, newRange: inside });
      check(`${title}: text outside the selection unchanged`, inside !== null,
        inside === null ? { now } : { selected: inside });
      if (outcome.kind === "edit") {
        check(`${title}: the edit changed the selection`, now !== rwOriginal, { selected: inside });
        break;
      }
      check(`${title}: no edit, so nothing changed`, now === rwOriginal && !(await page.evaluate(() =>
        document.querySelector(".tab.active")?.classList.contains("dirty"))), outcome.msg);
    }
    log("code action picks:", JSON.stringify(picks));

    // "nothing found": Repair syntax on a line that parses says why in one line, and no progress toast of the
    // command stays up beside that message
    await runCommand(page, "Notifications: Clear All Notifications");
    await page.keyboard.press("Escape");
    await rwEditor.click({ position: { x: 200, y: 10 } });
    await page.keyboard.press("Control+Home");
    await page.keyboard.press("Shift+End");
    await runCommand(page, "dgcomplete: Repair syntax");
    const nothing = await page.waitForFunction(() => {
      const msgs = [...document.querySelectorAll(".notifications-toasts .notification-list-item-message")]
        .map((e) => (e.textContent || "").replace(/\u00a0/g, " ").trim());
      const m = msgs.find((t) => t.startsWith("dgcomplete: repairSyntax: ")); // the extension names the server command
      return m ? { m, others: msgs.filter((t) => t !== m) } : false;
    }, null, { timeout: 60000 }).then((h) => h.jsonValue()).catch(() => null);
    check("Repair syntax with nothing to repair says why", !!nothing, nothing);
    check("no progress toast beside the final message", !!nothing && !nothing.others.some((t) => /dgcomplete: Repair/.test(t)),
      nothing && nothing.others);

    if (env("UPDATE_SCREENSHOT", "") === "1") {
      fs.copyFileSync(ACTIONS_SHOT, path.join(root, "editors/vscode/code-actions.png"));
      log("copied the code-action screenshot to editors/vscode/code-actions.png");
    }
  } catch (e) {
    try {
      const pages = browser?.pages() ?? [];
      if (pages[0]) await pages[0].screenshot({ path: path.join(ART, "vscode-failure.png") });
    } catch { /* best effort */ }
    throw e;
  } finally {
    await browser.close().catch(() => undefined);
    stopCodeServer(cs);
    fs.writeFileSync(path.join(WORK, "result.json"), JSON.stringify({ checks }, null, 1));
  }
}

runMain(main, { log, work: WORK, timeoutMs: TIMEOUT_MS, done: () => `ALL PASSED (${checks.length} checks)` });
