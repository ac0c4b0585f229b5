// Helpers shared by the VS Code tests (e2e.mjs) and the README screenshot (screenshot.mjs).
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

export async function waitHttp(url, ms) {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    const ok = await new Promise((resolve) => {
      const req = http.get(url, (res) => {
        res.resume();
        resolve(res.statusCode && res.statusCode < 500);
      });
      req.on("error", () => resolve(false));
      req.setTimeout(2000, () => {
        req.destroy();
        resolve(false);
      });
    });
    if (ok) return true;
    await sleep(250);
  }
  return false;
}

export function freshDir(p) {
  fs.rmSync(p, { recursive: true, force: true });
  fs.mkdirSync(p, { recursive: true });
  return p;
}

// VS Code user settings both runs share: no telemetry, no update checks, nothing that pops up over the editor
// or steals Tab, ghost text on; each run adds its own (dgcomplete.*, editor specifics)
export const BASE_SETTINGS = {
  "telemetry.telemetryLevel": "off",
  "extensions.autoUpdate": false,
  "extensions.autoCheckUpdates": false,
  "extensions.ignoreRecommendations": true,
  "update.mode": "none",
  "workbench.enableExperiments": false,
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "chat.commandCenter.enabled": false,
  "security.workspace.trust.enabled": false,
  "git.enabled": false,
  "npm.fetchOnlinePackageInfo": false,
  "editor.quickSuggestions": { other: false, comments: false, strings: false },
  "editor.suggestOnTriggerCharacters": false,
  "editor.wordBasedSuggestions": "off",
  "editor.inlineSuggest.enabled": true,
  "editor.minimap.enabled": false,
  "files.trimTrailingWhitespace": false,
  "files.insertFinalNewline": false,
};

// Chromium as the machine allows it (no sandbox as root, no network chatter against the closed network)
export const CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"];

// Fresh folders under `work` for one run, and code-server's environment (the checkout importable: the daemon
// runs in the workspace folder)
export function freshRun(work, root) {
  freshDir(work);
  const dirs = {
    userData: freshDir(path.join(work, "user-data")),
    extDir: freshDir(path.join(work, "extensions")),
    profile: freshDir(path.join(work, "chromium-profile")),
    ws: freshDir(path.join(work, "workspace")),
  };
  const xdg = freshDir(path.join(work, "xdg"));
  dirs.env = {
    ...process.env,
    XDG_CONFIG_HOME: path.join(xdg, "config"),
    XDG_DATA_HOME: path.join(xdg, "data"),
    XDG_CACHE_HOME: path.join(xdg, "cache"),
    PYTHONPATH: [root, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter),
  };
  return dirs;
}

// A run's fresh folders (freshRun), once everything it drives is there (a clear error naming what is missing),
// with VS Code's user settings: BASE_SETTINGS, the daemon's command line (daemonCommand), then the run's own
export function prepareRun(work, settings = {}) {
  for (const [what, p] of [["code-server", CODE_SERVER], ["vsix", VSIX], ["chromium", CHROMIUM], ["python", PYTHON]]) {
    if (!fs.existsSync(p)) throw new Error(`${what} not found at ${p} (run make -C editors setup vsix)`);
  }
  const dirs = freshRun(work, root);
  writeUserSettings(dirs, { ...BASE_SETTINGS, "dgcomplete.command": daemonCommand(work), ...settings });
  return dirs;
}

// What the tests type must reach the daemon as typed: no closing bracket or quote added by the editor
export const TYPING_SETTINGS = { "editor.autoClosingBrackets": "never", "editor.autoClosingQuotes": "never" };

// dgcomplete.command for a run: the venv's daemon on stdio, its log in `work` (the workspace has no .venv)
export function daemonCommand(work) {
  return [PYTHON, "-m", "dgcomplete", "serve", "--log-file", path.join(work, "daemon.log")];
}

export function writeUserSettings(dirs, settings) {
  fs.mkdirSync(path.join(dirs.userData, "User"), { recursive: true });
  fs.writeFileSync(path.join(dirs.userData, "User", "settings.json"), JSON.stringify(settings, null, 1));
}

// code-server's own output of installing the extension (the caller decides whether it says "successfully")
export function installVsix(codeServer, vsix, dirs) {
  return execFileSync(codeServer, ["--user-data-dir", dirs.userData, "--extensions-dir", dirs.extDir,
    "--install-extension", vsix], { env: dirs.env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

// code-server on a free loopback port, its log in `work`; returns the process (own process group) and the port
export async function startCodeServer(codeServer, work, dirs) {
  const port = await freePort();
  fs.writeFileSync(path.join(work, "code-server.yaml"), "");
  const csLog = fs.openSync(path.join(work, "code-server.log"), "w");
  const cs = spawn(codeServer, [
    "--auth", "none", "--bind-addr", `127.0.0.1:${port}`, "--user-data-dir", dirs.userData, "--extensions-dir",
    dirs.extDir, "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust",
    "--disable-getting-started-override", "--config", path.join(work, "code-server.yaml"), dirs.ws,
  ], { env: dirs.env, stdio: ["ignore", csLog, csLog], detached: true });
  return { cs, port };
}

export function stopCodeServer(cs) {
  try {
    process.kill(-cs.pid, "SIGTERM");
  } catch { /* gone already */ }
}

// Where things are (the checkout, code-server, the .vsix, Chromium, the venv's Python, DG_MODEL), from the
// environment the editors Makefile sets, with the checkout's defaults
const env0 = (k, d) => (process.env[k] && process.env[k] !== "" ? process.env[k] : d);
export const env = env0;
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const CODE_SERVER = env0("CODE_SERVER", path.join(root, "editors/.cache/code-server/node_modules/.bin/code-server"));
export const VSIX = env0("VSIX", path.join(root, "editors/vscode/dgcomplete.vsix"));
export const CHROMIUM = env0("CHROMIUM", "/usr/bin/chromium");
export const PYTHON = path.resolve(root, env0("DG_PYTHON", ".venv/bin/python"));
export const MODEL = env0("DG_MODEL", "");
export const ART = path.join(root, ".test-artifacts");

// One run's checks: check(name, cond, detail) logs PASS or FAIL and throws on a failure
export function checker(log) {
  const checks = [];
  const check = (name, cond, detail) => {
    checks.push({ name, ok: !!cond, detail });
    log(`${cond ? "PASS" : "FAIL"} ${name}${detail !== undefined ? `: ${JSON.stringify(detail)}` : ""}`);
    if (!cond) throw new Error(`check failed: ${name}`);
  };
  return { checks, check };
}

// Run `main` within `timeoutMs`: exit 0 when it resolves (logging `done()`'s line), 1 when it fails or times out,
// with the tails of the daemon's and code-server's logs in `work`
export function runMain(main, { log, work, timeoutMs, done = () => "done" }) {
  const timer = setTimeout(() => {
    log(`FAILED: timeout after ${timeoutMs} ms`);
    process.exit(1);
  }, timeoutMs);
  main().then(
    () => {
      clearTimeout(timer);
      log(done());
      process.exit(0);
    },
    (e) => {
      clearTimeout(timer);
      log(`FAILED: ${e.message}`);
      for (const f of ["daemon.log", "code-server.log"]) {
        const p = path.join(work, f);
        if (fs.existsSync(p)) log(`--- ${f} (tail)\n` + fs.readFileSync(p, "utf8").split("\n").slice(-15).join("\n"));
      }
      process.exit(1);
    },
  );
}

// code-server's workbench on the folder `ws`, in a fresh headless Chromium (`profile`): { browser, page }
export async function openWorkbench(profile, port, ws, deviceScaleFactor = 1) {
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, viewport: { width: 1100, height: 620 }, deviceScaleFactor,
    args: CHROMIUM_ARGS,
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  page.setDefaultTimeout(60000);
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
  await page.waitForSelector(".monaco-workbench", { timeout: 90000 });
  return { browser, page };
}

// Quick Open (Ctrl+P) a workspace file by its name
export async function quickOpen(page, name) {
  await page.keyboard.press("Control+P");
  await page.waitForSelector(".quick-input-widget input", { state: "visible" });
  await page.keyboard.type(name, { delay: 20 });
  await page.waitForSelector(`.quick-input-list .monaco-list-row:has-text('${name}')`);
  await sleep(300);
  await page.keyboard.press("Enter");
}

// Run a command palette entry by its exact label
export async function runCommand(page, label) {
  await page.keyboard.press("Control+Shift+P");
  await page.waitForSelector(".quick-input-widget input", { state: "visible" });
  await page.keyboard.type(label, { delay: 20 });
  // the focused (first) row must be exactly this command: "Refactor..." also matches other entries
  const focused = await page.waitForFunction((l) => {
    const r = document.querySelector(".quick-input-list .monaco-list-row.focused .label-name");
    return r && (r.textContent || "").replace(/\u00a0/g, " ").trim() === l;
  }, label, { timeout: 15000 }).catch(() => null);
  if (!focused) {
    const rows = await page.evaluate(() => [...document.querySelectorAll(".quick-input-list .monaco-list-row")]
      .map((e) => e.textContent));
    throw new Error(`command palette: ${label} is not the first entry: ${JSON.stringify(rows)}`);
  }
  await page.keyboard.press("Enter");
}

// The .vsix installed into the run's fresh code-server, code-server started and its workbench open in Chromium:
// { cs, browser, page }. The caller closes the browser and stops code-server (stopCodeServer) when done; if this
// fails half-way, what it started is stopped here.
export async function launch(dirs, work, check, deviceScaleFactor = 1) {
  const inst = installVsix(CODE_SERVER, VSIX, dirs);
  check("vsix installed", /successfully installed/i.test(inst), inst.trim().split("\n").pop());
  const { cs, port } = await startCodeServer(CODE_SERVER, work, dirs);
  try {
    check("code-server listening", await waitHttp(`http://127.0.0.1:${port}/healthz`, 60000), port);
    const { browser, page } = await openWorkbench(dirs.profile, port, dirs.ws, deviceScaleFactor);
    return { cs, browser, page };
  } catch (e) {
    stopCodeServer(cs);
    throw e;
  }
}
