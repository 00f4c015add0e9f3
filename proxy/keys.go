package proxy

// keyRange is where a command's keys sit: args[first], through args[last]
// (-1: all the rest); first 0: none.
type keyRange struct{ first, last int }

// keysOf lists the keys a command touches, where its table entry says they
// are: for ACL prefixes, reserved names, databases and to order a
// pipeline's rounds. It takes any argument list, arity not yet checked: the
// pipeline scheduler asks before dispatch does. The keys are the
// arguments themselves (a slice of args), so that selectdb.go can map them
// in place.
func keysOf(cmd *command, args [][]byte) [][]byte {
	if cmd.keysAt != nil {
		return cmd.keysAt(args)
	}
	r := cmd.keys
	switch {
	case r.first == 0 || len(args) <= r.first:
		return nil
	case r.last < 0:
		return args[r.first:]
	}
	return args[r.first:min(r.last+1, len(args))]
}
