/**
 * `/help`: the keys and commands of the interactive command line, one per
 * line. The greeting shows only the short two-line `HELP` of `commands.ts`.
 */
export const HELP_DETAILS: readonly string[] = [
  'Keys',
  '  Enter                send the message (while the agent works: steer the running turn)',
  '  \\ at the end, Alt-Enter, Ctrl-J   continue on a new line; a pasted text keeps its lines',
  '  Up / Down            earlier messages (and the lines of a long message)',
  '  Ctrl-C               clear the line; on an empty line: cancel the running turn, again (or when idle) exit',
  '  Ctrl-D               exit (on an empty line)',
  '  @path                attach a file (or a directory listing) of the workspace to the message',
  'Commands',
  '  /help                this list',
  '  /model [provider/model]   show the model and the ones to switch to, or switch (from the next request)',
  '  /cost                tokens and money this session has spent, per model',
  '  /compact [instructions]   summarize the older history now',
  '  /mode [default|accept-edits|plan]   show or change the permission mode',
  '  /trust               apply the workspace\'s .dsh/settings.json rules',
  '  /sessions            saved sessions, newest first',
  '  /resume <id>         continue a saved session (shows its last turns)',
  '  /new                 start a new session',
  '  /mcp                 the MCP servers and their tools',
  '  /tasks [stop [id]]   background tasks (subagents, shell commands); stop one, or all',
  '  /exit                quit',
]
