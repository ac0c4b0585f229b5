// End-to-end test of completions in a Jupyter notebook, in a real VS Code (code-server, its built-in .ipynb
// support, no kernel) driven by a real Chromium.
//
//   CODE_SERVER=... VSIX=... CHROMIUM=/usr/bin/chromium DG_PYTHON=.venv/bin/python DG_MODEL=<dir or empty> \
//     node editors/vscode/test/notebook.mjs
//
// Opens analysis.ipynb (a code cell, a Markdown cell, an empty code cell), types the start of a line in the last
// cell and asserts that the ghost text completes it with a line only the first cell holds: the language client
// syncs the notebook (notebookDocumentSync) and the server completes a cell with the cells above it in view.
// Then an unclosed call on a new line of that cell, and *Repair syntax* from the palette: the edit closes it there.
// With a test model (DG_MODEL set, as make's test-vscode does) the server is asked for retrieved lines only,
// shown without the gate, so the ghost text does not depend on the model; with the embedded model (DG_MODEL=
// empty, make's screenshot) every setting is the default. Tab accepts; the saved notebook's last cell must hold
// exactly that line, the other cells unchanged.
// Screenshot: .test-artifacts/vscode-notebook.png (UPDATE_SCREENSHOT=1 with the embedded model also copies it to
// editors/vscode/notebook.png, the README's picture)
import fs from "node:fs";
import path from "node:path";

import { ART, checker, env, launch, MODEL, prepareRun, quickOpen, root, runCommand, runMain, sleep, stopCodeServer,
  TYPING_SETTINGS } from "./util.mjs";

const WORK = path.join(ART, "vscode-notebook");
const SHOT = path.join(ART, "vscode-notebook.png");
const TIMEOUT_MS = Number(env("DG_E2E_TIMEOUT_MS", "420000"));
const LINE = "summary = frame.describe(include='all')";
const SHIPPED = MODEL === ""; // the embedded model, default settings

const log = (...a) => console.error("[vscode-notebook]", ...a);
const { checks, check } = checker(log);

const code = (lines) => ({ cell_type: "code", execution_count: null, metadata: {}, outputs: [], source: lines });
const NOTEBOOK = {
  cells: [
    code(["import pandas as pd\n", "frame = pd.read_csv('data.csv')\n", LINE]),
    { cell_type: "markdown", metadata: {}, source: ["# Notes"] },
    code([]),
  ],
  metadata: { kernelspec: { display_name: "Python 3", language: "python", name: "python3" },
    language_info: { name: "python" } },
  nbformat: 4,
  nbformat_minor: 5,
};

async function main() {
  const dirs = prepareRun(WORK, {
    ...TYPING_SETTINGS,
    "notebook.lineNumbers": "on",
    "dgcomplete.modelPath": MODEL,
    ...(SHIPPED ? {} : { "dgcomplete.serverSettings": { contextSources: ["document"], minConfidence: 0 } }),
  });
  const { ws } = dirs;
  const file = path.join(ws, "analysis.ipynb");
  fs.writeFileSync(file, JSON.stringify(NOTEBOOK, null, 1));

  const { cs, browser, page } = await launch(dirs, WORK, check);
  try {
    await sleep(1500);

    // open the notebook through Quick Open: VS Code's notebook editor, one editor per cell
    await quickOpen(page, "analysis.ipynb");
    const cells = page.locator(".notebook-editor .cell-editor-container .monaco-editor");
    const opened = await page.waitForFunction(() => document.querySelectorAll(
      ".notebook-editor .cell-editor-container .monaco-editor").length >= 2, null, { timeout: 60000 }).catch(() => null);
    check("notebook open with its code cells", !!opened, await cells.count());

    // the extension starts on the cells' language; its status bar item says when the model is ready
    const ready = await page.waitForFunction(() => {
      const item = [...document.querySelectorAll(".statusbar-item")]
        .find((e) => /dgcomplete|dg \d+ ms/.test(e.textContent || ""));
      return !!item && !!item.querySelector(".codicon-sparkle");
    }, null, { timeout: 180000 }).catch(() => null);
    check("status bar shows ready", !!ready);

    // type the start of the line in the last (empty) code cell
    const last = cells.last();
    await last.click();
    await sleep(500);
    const ghostSel = ".monaco-editor .ghost-text-decoration, .monaco-editor .ghost-text-decoration-preview";
    await page.keyboard.type("summ", { delay: 60 });
    let ghost = await page.waitForSelector(ghostSel, { timeout: 30000 }).catch(() => null);
    if (!ghost) {
      log("no ghost text after typing; triggering explicitly");
      await page.keyboard.press("Alt+Backslash");
      ghost = await page.waitForSelector(ghostSel, { timeout: 15000 }).catch(() => null);
    }
    check("ghost text appears in the cell", !!ghost);
    await sleep(400);
    const ghostText = await page.evaluate((sel) => [...document.querySelectorAll(sel)].map((e) => e.textContent)
      .join("").replace(/\u00a0/g, " "), ghostSel);
    check("the ghost text is the line from the first cell", "summ" + ghostText === LINE, ghostText);
    await page.screenshot({ path: SHOT });
    log("screenshot", path.relative(root, SHOT));
    if (SHIPPED && env("UPDATE_SCREENSHOT", "") === "1") {
      fs.copyFileSync(SHOT, path.join(root, "editors/vscode/notebook.png"));
      log("updated editors/vscode/notebook.png");
    }

    // Tab accepts into that cell; saved, the notebook's cells hold exactly what was there plus the line
    await page.keyboard.press("Tab");
    await sleep(300);
    await page.keyboard.press("Control+S");
    let saved = null;
    const t0 = Date.now();
    while (Date.now() - t0 < 15000) {
      try {
        const nb = JSON.parse(fs.readFileSync(file, "utf8"));
        if (nb.cells[2].source.join("") !== "") {
          saved = nb;
          break;
        }
      } catch { /* being written */ }
      await sleep(200);
    }
    const sources = saved ? saved.cells.map((c) => (Array.isArray(c.source) ? c.source.join("") : c.source)) : null;
    check("Tab inserts the line into the last cell only", sources && sources[2] === LINE &&
      sources[0] === NOTEBOOK.cells[0].source.join("") && sources[1] === "# Notes", sources);

    // Repair syntax in a cell: an unclosed call typed on a new line of the same cell, the command run from the
    // palette with the cursor on it (its line is the range); the edit lands on that line of that cell only
    await page.keyboard.press("End");
    await page.keyboard.press("Enter");
    await page.keyboard.type("print(summary", { delay: 30 });
    await runCommand(page, "dgcomplete: Repair syntax");
    const want = `${LINE}\nprint(summary)`;
    let repaired = null;
    const t1 = Date.now();
    while (Date.now() - t1 < 30000) {
      await page.keyboard.press("Control+S");
      await sleep(500);
      const nb = JSON.parse(fs.readFileSync(file, "utf8"));
      const got = nb.cells.map((c) => (Array.isArray(c.source) ? c.source.join("") : c.source));
      if (got[2] === want) {
        repaired = got;
        break;
      }
    }
    check("Repair syntax edits the cell's own line", repaired && repaired[0] === sources[0] &&
      repaired[1] === "# Notes", repaired);
  } finally {
    await browser.close().catch(() => undefined);
    stopCodeServer(cs);
    fs.writeFileSync(path.join(WORK, "result.json"), JSON.stringify({ checks }, null, 1));
  }
}

runMain(main, { log, work: WORK, timeoutMs: TIMEOUT_MS, done: () => `ALL PASSED (${checks.length} checks)` });
