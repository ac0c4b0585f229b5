// The README's screenshot: the shipped model's own ghost text in a real VS Code (code-server, headless Chromium).
//
//   CODE_SERVER=... VSIX=... CHROMIUM=/usr/bin/chromium DG_PYTHON=.venv/bin/python [DG_MODEL=<dir>] \
//     node editors/vscode/test/screenshot.mjs          (make -C editors screenshot)
//
// Same launch as e2e.mjs (fresh code-server profile, the .vsix installed, no telemetry or pop-ups), but the
// daemon runs with its default settings: no dgcomplete.* setting besides the command line that starts it, so
// DG_MODEL unset or empty means the model embedded in the package (dg-code-tiny), maxLines 8, minConfidence the model gate's threshold (0.29).
// It opens animals.py (SCENARIO below), puts the cursor at the end of `def __init__(self, name, color):` in the
// last class, presses Enter as a user would, and waits for the ghost text the daemon sends on that edit. No
// explicit trigger (Alt+\): an invoked request asks for 3 candidates and is not gated, so it would show what the
// gate hides by default. Then it takes the screenshot, presses Tab and checks that the saved file gained exactly
// the ghost text (so what the picture shows is what the daemon sent).
// Output: .test-artifacts/vscode-screenshot.png; UPDATE_SCREENSHOT=1 also copies it to editors/vscode/screenshot.png.
import fs from "node:fs";
import path from "node:path";

import { ART, env, launch, MODEL, prepareRun, quickOpen, root, runMain, sleep, stopCodeServer, VSIX } from "./util.mjs";

const WORK = path.join(ART, "vscode-screenshot");
const SHOT = path.join(ART, "vscode-screenshot.png");
const TIMEOUT_MS = Number(env("DG_E2E_TIMEOUT_MS", "300000"));

// the open file, and the line (1-based) whose end the cursor goes to before Enter
const FILE = "animals.py";
// the file both editors' pictures show (editors/test/animals.py.in; the Emacs one is emacs/test/screenshot.sh)
const SCENARIO = fs.readFileSync(path.join(root, "editors", "test", "animals.py.in"), "utf8");
const CURSOR_LINE = 19;
const INDENT = "        "; // what VS Code's Python indentation rules put after Enter there

const log = (...a) => console.error("[vscode-screenshot]", ...a);

async function main() {
  // VS Code settings as in e2e.mjs; of dgcomplete's only the command line (the workspace is a temporary folder
  // without .venv) and, when DG_MODEL names one, the checkpoint
  const dirs = prepareRun(WORK, {
    "editor.stickyScroll.enabled": false,
    ...(MODEL ? { "dgcomplete.modelPath": MODEL } : {}),
  });
  const { ws } = dirs;
  const file = path.join(ws, FILE);
  fs.writeFileSync(file, SCENARIO);

  log("installing", path.relative(root, VSIX), "model:", MODEL || "embedded (dg-code-tiny)");
  const fail = (what, ok, detail) => {
    if (!ok) throw new Error(`${what}: no (${JSON.stringify(detail)})`);
  };
  const { cs, browser, page } = await launch(dirs, WORK, fail, 2); // 2: sharp at the README's width
  try {
    await sleep(1500);

    // open the file through Quick Open
    await quickOpen(page, FILE);
    await page.waitForFunction(() => [...document.querySelectorAll(".editor-instance .view-lines")]
      .some((e) => (e.textContent || "").replace(/\u00a0/g, " ").includes("class Cat")), null, { timeout: 30000 });

    // the daemon has loaded its model: the status bar item shows the sparkle
    const ready = await page.waitForFunction(() => {
      const item = [...document.querySelectorAll(".statusbar-item")]
        .find((e) => /dgcomplete|dg \d+ ms/.test(e.textContent || ""));
      return !!item && !!item.querySelector(".codicon-sparkle, .codicon-error, .codicon-circle-slash");
    }, null, { timeout: 180000 }).catch(() => null);
    const sparkle = ready && (await page.evaluate(() => !!document.querySelector(".statusbar-item .codicon-sparkle")));
    if (!sparkle) throw new Error("the dgcomplete status bar item never showed ready");
    log("daemon ready");
    await sleep(500);

    // the cursor to the end of CURSOR_LINE (arrow keys: the view stays at the top, the whole file in sight), Enter
    await page.locator(".editor-instance .monaco-editor").first().click({ position: { x: 300, y: 5 } });
    await page.keyboard.press("Control+Home");
    for (let i = 1; i < CURSOR_LINE; i++) await page.keyboard.press("ArrowDown");
    await page.keyboard.press("End");
    await page.keyboard.press("Enter");
    const want = `Ln ${CURSOR_LINE + 1}, Col ${INDENT.length + 1}`;
    const pos = await page.waitForFunction((w) => {
      const t = document.getElementById("status.editor.selection")?.textContent || "";
      return t.includes(w) ? t : false;
    }, want, { timeout: 10000 }).then((h) => h.jsonValue()).catch(async () =>
      page.evaluate(() => document.getElementById("status.editor.selection")?.textContent || "?"));
    log("cursor:", pos);
    if (!pos.includes(want)) throw new Error(`Enter did not indent the new line as expected (${pos}, want ${want})`);

    const ghostSel = ".monaco-editor .ghost-text-decoration, .monaco-editor .ghost-text-decoration-preview, .monaco-editor .ghost-text";
    const ghost = await page.waitForSelector(ghostSel, { timeout: 30000 }).catch(() => null);
    if (!ghost) throw new Error("no ghost text within 30 s (the gate may have hidden it: see daemon.log)");
    await sleep(600); // let the decoration settle
    const ghostText = await page.evaluate(() => {
      const ed = document.querySelector(".editor-instance .monaco-editor");
      const inline = [...ed.querySelectorAll(".ghost-text-decoration, .ghost-text-decoration-preview")]
        .map((e) => e.textContent).join("");
      const zone = [...ed.querySelectorAll(".ghost-text .view-line")].map((e) => e.textContent);
      return [inline, ...zone].join("\n").replace(/\u00a0/g, " ");
    });
    log("ghost text:", JSON.stringify(ghostText));
    await page.screenshot({ path: SHOT });
    log("screenshot", path.relative(root, SHOT));

    // Tab accepts: the saved file has exactly the ghost text where the cursor was
    await page.keyboard.press("Tab");
    await sleep(300);
    await page.keyboard.press("Control+S");
    const lines = SCENARIO.split("\n");
    const expected = [...lines.slice(0, CURSOR_LINE), INDENT + ghostText, ...lines.slice(CURSOR_LINE)].join("\n");
    let after = "";
    const t0 = Date.now();
    while (Date.now() - t0 < 10000) {
      after = fs.readFileSync(file, "utf8");
      if (after === expected) break;
      await sleep(200);
    }
    if (after !== expected) throw new Error(`Tab did not insert exactly the ghost text:\n${after}`);
    log("Tab inserted exactly the ghost text");

    if (env("UPDATE_SCREENSHOT", "") === "1") {
      fs.copyFileSync(SHOT, path.join(root, "editors/vscode/screenshot.png"));
      log("copied to editors/vscode/screenshot.png");
    }
  } catch (e) {
    try {
      const pages = browser.pages();
      if (pages[0]) await pages[0].screenshot({ path: path.join(ART, "vscode-screenshot-failure.png") });
    } catch { /* best effort */ }
    throw e;
  } finally {
    await browser.close().catch(() => undefined);
    stopCodeServer(cs);
  }
}

runMain(main, { log, work: WORK, timeoutMs: TIMEOUT_MS });
