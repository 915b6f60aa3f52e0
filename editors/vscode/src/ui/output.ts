// The two output channels: "Kgent" (the transcript, written by TranscriptWriter) and "Kgent Daemon" (the daemon's
// stderr and the extension's own notes about the daemon). Nothing is written once the extension is disposed.

import * as vscode from "vscode";
import { TranscriptWriter } from "../transcript";

export class Output implements vscode.Disposable {
  private readonly transcriptChannel: vscode.OutputChannel;
  private readonly daemonChannel: vscode.OutputChannel;
  readonly transcript: TranscriptWriter;
  private isDisposed = false;

  constructor() {
    this.transcriptChannel = vscode.window.createOutputChannel("Kgent");
    this.daemonChannel = vscode.window.createOutputChannel("Kgent Daemon");
    this.transcript = new TranscriptWriter({ append: (t) => this.transcriptChannel.append(t) });
  }

  get disposed(): boolean {
    return this.isDisposed;
  }

  /** Append to the daemon log ("Kgent Daemon"). */
  log(text: string): void {
    if (!this.isDisposed) this.daemonChannel.append(text);
  }

  showTranscript(): void {
    this.transcriptChannel.show(true);
  }

  showDaemonLog(): void {
    this.daemonChannel.show(true);
  }

  dispose(): void {
    this.isDisposed = true;
    this.transcriptChannel.dispose();
    this.daemonChannel.dispose();
  }
}
