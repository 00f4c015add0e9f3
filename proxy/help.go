package proxy

// HELP of the container commands, as Redis answers it: an array of status
// lines, the first naming the command, each subcommand's syntax followed by
// its meaning indented by four spaces, HELP last.

var helpLines = map[string][]string{
	"CLIENT": {
		"GETNAME",
		"    Return the name of the current connection.",
		"ID",
		"    Return the ID of the current connection.",
		"INFO",
		"    Return information about the current client connection.",
		"SETINFO <option> <value>",
		"    Set client meta attr. Options are:",
		"    * LIB-NAME: the client lib name.",
		"    * LIB-VER: the client lib version.",
		"SETNAME <name>",
		"    Assign the name <name> to the current connection.",
	},
	"COMMAND": {
		"(no subcommand)",
		"    Return details about all commands this server serves.",
		"COUNT",
		"    Return the total number of commands this server serves.",
		"DOCS [<command-name> ...]",
		"    Return documentary information about commands (by default, the proxy's own LOCK.* commands).",
		"INFO [<command-name> ...]",
		"    Return details about multiple commands.",
	},
	"SCRIPT": {
		"EXISTS <sha1> [<sha1> ...]",
		"    Return information about the existence of the scripts in the script cache.",
		"FLUSH [ASYNC|SYNC]",
		"    Flush this user's script cache.",
		"LOAD <script>",
		"    Load a lock script the proxy recognises (or an operator registered) into the script cache.",
		"    Other scripts are refused: nothing is forwarded to a backend.",
	},
	"REDLOCK": {
		"LOCKS [<prefix> [<limit>]]",
		"    Return the locks a quorum of backends holds now, as [key, owner, ttl ms] (admin).",
		"FORCEUNLOCK <key>",
		"    Delete a lock whoever holds it; audited in the log (admin).",
		"redlock-proxy serves lock commands only: SET key value NX PX ms, the compare-and-delete and",
		"compare-and-PEXPIRE scripts, GET, PTTL, EXISTS, DEL, LOCK.ACQUIRE, LOCK.EXTEND, LOCK.RELEASE,",
		"LOCK.TOKEN (COMMAND DOCS describes these), pub/sub wake-ups and the connection commands.",
		"Any other command gets Redis's unknown command error. See README.md.",
	},
}

// writeHelp answers CMD HELP.
func (c *request) writeHelp(cmd string) {
	lines := helpLines[cmd]
	c.wr.WriteArray(len(lines) + 3)
	c.wr.WriteString(cmd + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
	for _, l := range lines {
		c.wr.WriteString(l)
	}
	c.wr.WriteString("HELP")
	c.wr.WriteString("    Print this help.")
}

// isHelp tells whether args are CMD HELP.
func isHelp(args [][]byte) bool { return len(args) == 2 && equalFold(args[1], "help") }
