// dgcomplete for VS Code: starts `dgcomplete serve` on stdio and lets vscode-languageclient (11, with inline
// completion built in) do the LSP work. This file adds settings plumbing, the rewrite commands, a status bar
// item (loading / ready / error, last latency) and a "Show log" command.
import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";
import {
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  LogMessageNotification,
  MessageType,
  ServerOptions,
  ShowMessageNotification,
  State,
  WorkDoneProgress,
  WorkDoneProgressCancelNotification,
  WorkDoneProgressCreateRequest,
} from "vscode-languageclient/node";

const SECTION = "dgcomplete";
// the server registers these names as its own executeCommand commands, so ours carry an `editor.` infix
const REWRITES: Record<string, string> = {
  "dgcomplete.editor.rewriteSelection": "dgcomplete.rewriteSelection",
  "dgcomplete.editor.repairSyntax": "dgcomplete.repairSyntax",
  "dgcomplete.editor.fillHoles": "dgcomplete.fillHoles",
};

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel;
let status: vscode.StatusBarItem;
let statsTimer: NodeJS.Timeout | undefined;
let acceptTimer: NodeJS.Timeout | undefined;
let phase: "loading" | "ready" | "error" | "stopped" = "stopped";
let lastStats: Record<string, unknown> | undefined;

function config(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(SECTION);
}

/** Suggestions paused (`dgcomplete.enable` off): no completion request leaves the editor; rewrites still work. */
function paused(): boolean {
  return !config().get<boolean>("enable", true);
}

/** The settings the server understands (camelCase, flat), from the `dgcomplete.*` settings. */
export function serverSettings(): Record<string, unknown> {
  const c = config();
  const out: Record<string, unknown> = { ...(c.get<Record<string, unknown>>("serverSettings") ?? {}) };
  out.maxLines = c.get<number>("maxLines", 8);
  out.enabledLanguages = c.get<string[] | null>("enabledLanguages", null);
  const threads = c.get<number | null>("threads", null);
  if (threads) out.threads = threads;
  const model = c.get<string>("modelPath", "");
  if (model) out.model = model;
  return out;
}

/** `serve --shared`: every window relays to one per-user daemon (one model in memory). "auto": on when a
 * checkpoint is configured (a big model is loaded once), off for the small embedded one. */
export function sharedArgs(): string[] {
  const c = config();
  const mode = c.get<boolean | "auto">("shared", "auto");
  const model = c.get<string>("modelPath", "");
  if (!(mode === true || (mode === "auto" && model !== ""))) return [];
  const out = ["--shared"];
  if (model) out.push("--model", model); // the daemon is chosen (and started) per checkpoint
  const threads = c.get<number | null>("threads", null);
  if (threads) out.push("--threads", String(threads));
  return out;
}

function serverCommand(): string[] {
  const cmd = config().get<string[]>("command", []);
  if (cmd && cmd.length > 0) return cmd; // as given: add --shared there yourself
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    if (folder.uri.scheme !== "file") continue;
    const py = path.join(folder.uri.fsPath, ".venv", process.platform === "win32" ? "Scripts/python.exe" : "bin/python");
    if (fs.existsSync(py) && fs.existsSync(path.join(folder.uri.fsPath, "dgcomplete"))) {
      return [py, "-m", "dgcomplete", "serve", ...sharedArgs()];
    }
  }
  return ["dgcomplete", "serve", ...sharedArgs()];
}

function setStatus(p: typeof phase, detail?: string): void {
  phase = p;
  status.command = "dgcomplete.editor.showLog";
  const ms = (lastStats?.last as { ms?: number } | undefined)?.ms;
  const p50 = (lastStats?.latency_ms as { p50?: number } | undefined)?.p50;
  switch (p) {
    case "loading":
      status.text = "$(sync~spin) dgcomplete";
      status.tooltip = `dgcomplete: loading the model${detail ? ` (${detail})` : ""}`;
      status.backgroundColor = undefined;
      break;
    case "ready":
      if (paused()) {
        status.text = "$(debug-pause) dgcomplete";
        status.tooltip = "dgcomplete: suggestions paused — click to resume";
        status.command = "dgcomplete.editor.toggle";
        status.backgroundColor = undefined;
        break;
      }
      status.text = ms !== undefined ? `$(sparkle) dg ${Math.round(ms)} ms` : "$(sparkle) dgcomplete";
      status.tooltip = new vscode.MarkdownString(
        `**dgcomplete ready**${detail ? ` — ${detail}` : ""}\n\n` +
          (lastStats
            ? `requests ${lastStats.requests}, shown ${lastStats.shown}, accepted ${lastStats.accepted}` +
              (p50 !== undefined ? `, p50 ${p50} ms` : "") + `\n\n`
            : "") +
          "Click for the log",
      );
      status.backgroundColor = undefined;
      break;
    case "error":
      status.text = "$(error) dgcomplete";
      status.tooltip = `dgcomplete: ${detail ?? "error"} — click for the log`;
      status.backgroundColor = new vscode.ThemeColor("statusBarItem.errorBackground");
      break;
    case "stopped":
      status.text = "$(circle-slash) dgcomplete";
      status.tooltip = "dgcomplete: server stopped — click for the log";
      status.backgroundColor = undefined;
      break;
  }
}

async function refreshStats(): Promise<void> {
  if (!client || client.state !== State.Running || phase === "loading") return;
  try {
    lastStats = (await client.sendRequest(ExecuteCommandRequest.type, { command: "dgcomplete.stats", arguments: [] })) as
      | Record<string, unknown>
      | undefined;
    if (phase === "ready") setStatus("ready");
  } catch (e) {
    output.debug(`dgcomplete.stats failed: ${e}`);
  }
}

function scheduleStats(): void {
  if (statsTimer) clearInterval(statsTimer);
  const secs = config().get<number>("statsIntervalSeconds", 30);
  // only while the window has focus: an idle editor costs the daemon nothing
  if (secs > 0) statsTimer = setInterval(() => vscode.window.state.focused && void refreshStats(), secs * 1000);
}

function selectionArgument(editor: vscode.TextEditor): Record<string, unknown> {
  const sel = editor.selection;
  const range = sel.isEmpty ? editor.document.lineAt(sel.active.line).range : sel;
  return {
    uri: editor.document.uri.toString(),
    range: {
      start: { line: range.start.line, character: range.start.character },
      end: { line: range.end.line, character: range.end.character },
    },
    version: editor.document.version,
  };
}

async function runRewrite(serverCommandName: string): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showWarningMessage("dgcomplete: open an editor first");
    return;
  }
  if (!client || client.state !== State.Running) {
    void vscode.window.showWarningMessage("dgcomplete: the server is not running");
    return;
  }
  const arg = selectionArgument(editor);
  const name = serverCommandName.split(".")[1];
  let message: (() => Thenable<unknown>) | undefined;
  await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: `dgcomplete: ${name}` },
    async () => {
      try {
        // the server answers with a workspace/applyEdit, which the client applies; when nothing was applied
        // the result says why in one line
        const res = (await client!.sendRequest(ExecuteCommandRequest.type, {
          command: serverCommandName,
          arguments: [arg],
        })) as { applied?: boolean; reason?: string } | null;
        if (res && res.applied === false) {
          message = () => vscode.window.showInformationMessage(`dgcomplete: ${name}: ${res.reason || "nothing to apply"}`);
        }
      } catch (e) {
        message = () => vscode.window.showErrorMessage(`dgcomplete: ${e instanceof Error ? e.message : String(e)}`);
      }
    },
  );
  // the command is over: no progress toast of it may stay up beside the final message
  for (const task of openTasks) task.done();
  if (message) void message();
}

function watchServerMessages(c: LanguageClient): void {
  // replace the default window/logMessage + showMessage handlers to follow the load state, keep their job
  c.onNotification(LogMessageNotification.type, (m) => {
    const text = m.message;
    switch (m.type) {
      case MessageType.Error:
        output.error(text);
        break;
      case MessageType.Warning:
        output.warn(text);
        break;
      case MessageType.Info:
        output.info(text);
        break;
      default:
        output.debug(text);
    }
    if (/ ready\b/.test(text) && phase !== "error") {
      setStatus("ready", text.replace(/^dgcomplete: /, ""));
      void refreshStats();
    }
  });
  c.onNotification(ShowMessageNotification.type, (m) => {
    output.appendLine(`[server] ${m.message}`);
    if (m.type === MessageType.Error) {
      setStatus("error", m.message);
      void vscode.window.showErrorMessage(m.message, "Show log").then((x) => x && output.show(true));
    } else if (m.type === MessageType.Warning) {
      void vscode.window.showWarningMessage(m.message);
    } else {
      void vscode.window.showInformationMessage(m.message);
    }
  });
  // the server reports model loading with $/progress: follow it in the status bar instead of a notification;
  // any other server progress (a rewrite) is a cancellable notification
  c.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
    let task: ServerTask | undefined;
    const sub = c.onProgress(WorkDoneProgress.type, token, (v) => {
      if (v.kind === "begin" && !/loading model/.test(v.title)) {
        task = serverTask(c, token, v.title, v.message, v.cancellable === true);
        return;
      }
      if (task) {
        if (v.kind === "report") task.report(v.message);
        else {
          sub.dispose();
          task.done();
        }
        return;
      }
      if (v.kind === "begin") setStatus("loading", v.message ?? v.title);
      else if (v.kind === "report") setStatus("loading", v.message);
      else {
        sub.dispose();
        if (v.message === "failed") setStatus("error", "the model failed to load");
        else setStatus("ready");
        void refreshStats();
      }
    });
  });
}

interface ServerTask {
  report(message?: string): void;
  done(): void;
}

const openTasks = new Set<ServerTask>(); // server progress notifications still showing

/** A server-started task as a notification (after 400 ms, so quick ones do not flash); Cancel is sent back as
 * window/workDoneProgress/cancel, which the server turns into cancelling the task. */
function serverTask(c: LanguageClient, token: string | number, title: string, message: string | undefined,
                    cancellable: boolean): ServerTask {
  let last = message;
  let report: ((m?: string) => void) | undefined;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const timer = setTimeout(() => {
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title, cancellable },
      async (progress, cancel) => {
        report = (m) => progress.report({ message: m });
        if (last) report(last);
        cancel.onCancellationRequested(() => {
          void c.sendNotification(WorkDoneProgressCancelNotification.type, { token });
        });
        await finished;
      },
    );
  }, 400);
  const task: ServerTask = {
    report(m) {
      last = m;
      report?.(m);
    },
    done() {
      clearTimeout(timer);
      openTasks.delete(task);
      finish();
    },
  };
  openTasks.add(task);
  return task;
}

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  const [command, ...args] = serverCommand();
  // no `transport`: TransportKind.stdio would append --stdio, which `dgcomplete serve` does not take
  const serverOptions: ServerOptions = { command, args, options: { env: process.env } };
  const clientOptions: LanguageClientOptions = {
    // notebook cells (Jupyter): the server syncs whole notebooks (notebookDocumentSync) and completes a cell with
    // the notebook's other code cells in view
    documentSelector: [{ scheme: "file" }, { scheme: "untitled" }, { notebook: "*" }],
    initializationOptions: { dgcomplete: serverSettings() },
    outputChannel: output,
    traceOutputChannel: output,
    middleware: {
      // paused: nothing is asked (no model work on the machine), and the editor shows nothing
      provideInlineCompletionItems: (document, position, ctx, token, next) =>
        paused() ? null : next(document, position, ctx, token),
      provideCompletionItem: (document, position, ctx, token, next) =>
        paused() ? null : next(document, position, ctx, token),
      executeCommand: async (cmd, cmdArgs, next) => {
        const result = await next(cmd, cmdArgs);
        if (cmd === "dgcomplete.accept") {
          // an accepted suggestion: refresh the latency shown, once, a moment later
          if (acceptTimer) clearTimeout(acceptTimer);
          acceptTimer = setTimeout(() => void refreshStats(), 300);
        }
        return result;
      },
    },
  };
  client = new LanguageClient("dgcomplete", "dgcomplete", serverOptions, clientOptions);
  client.onDidChangeState((e) => {
    if (e.newState === State.Stopped && phase === "loading") setStatus("error", "the server exited while starting");
    else if (e.newState === State.Stopped && phase !== "error") setStatus("stopped");
    if (e.newState === State.Starting) setStatus("loading", "starting");
  });
  setStatus("loading", `starting ${command}`);
  output.info(`starting: ${[command, ...args].join(" ")}`);
  try {
    await client.start();
    watchServerMessages(client);
    if (phase === "loading") {
      // the model may already be up (no progress support or a very fast load): ask
      const stats = (await client.sendRequest(ExecuteCommandRequest.type, { command: "dgcomplete.stats", arguments: [] }).catch(
        () => undefined,
      )) as Record<string, unknown> | undefined;
      if (stats?.model) {
        lastStats = stats;
        setStatus("ready", String(stats.model));
      }
    }
    scheduleStats();
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    setStatus("error", `cannot start ${command}: ${msg}`);
    output.error(`cannot start ${[command, ...args].join(" ")}: ${msg}`);
    void vscode.window
      .showErrorMessage(`dgcomplete: cannot start the server (${command}). Set "dgcomplete.command".`, "Show log")
      .then((x) => x && output.show(true));
  }
  void context;
}

async function stopClient(): Promise<void> {
  if (statsTimer) clearInterval(statsTimer);
  statsTimer = undefined;
  const c = client;
  client = undefined;
  if (c) {
    try {
      await c.stop(3000);
    } catch (e) {
      output.debug(`stop: ${e}`);
    }
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("dgcomplete", { log: true });
  status = vscode.window.createStatusBarItem("dgcomplete.status", vscode.StatusBarAlignment.Right, 100);
  status.name = "dgcomplete";
  status.command = "dgcomplete.editor.showLog";
  status.show();
  context.subscriptions.push(output, status);

  for (const [ours, theirs] of Object.entries(REWRITES)) {
    context.subscriptions.push(vscode.commands.registerCommand(ours, () => runRewrite(theirs)));
  }
  context.subscriptions.push(
    vscode.commands.registerCommand("dgcomplete.editor.showLog", () => output.show(true)),
    vscode.commands.registerCommand("dgcomplete.editor.showStats", async () => {
      await refreshStats();
      output.info(`stats: ${JSON.stringify(lastStats ?? {}, null, 1)}`);
      output.show(true);
    }),
    vscode.commands.registerCommand("dgcomplete.editor.toggle", async () => {
      const pause = !paused();
      await config().update("enable", !pause, vscode.ConfigurationTarget.Global);
      void vscode.window.setStatusBarMessage(`dgcomplete: suggestions ${pause ? "paused" : "on"}`, 3000);
    }),
    vscode.commands.registerCommand("dgcomplete.editor.restart", async () => {
      await stopClient();
      await startClient(context);
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (!e.affectsConfiguration(SECTION)) return;
      if (e.affectsConfiguration(`${SECTION}.command`) || e.affectsConfiguration(`${SECTION}.modelPath`)) {
        // the model is loaded once per process: a new command or model needs a new server
        await stopClient();
        await startClient(context);
        return;
      }
      if (e.affectsConfiguration(`${SECTION}.statsIntervalSeconds`)) scheduleStats();
      if (e.affectsConfiguration(`${SECTION}.enable`)) {
        setStatus(phase);
        return; // the client's own switch: nothing for the server
      }
      if (client && client.state === State.Running) {
        await client.sendNotification("workspace/didChangeConfiguration", { settings: { dgcomplete: serverSettings() } });
      }
    }),
  );
  await startClient(context);
}

export async function deactivate(): Promise<void> {
  if (acceptTimer) clearTimeout(acceptTimer);
  await stopClient();
}
