// findings/ owns the Finding type every check returns, the rule table (RULES) and the finding
// builders. It is the bottom of the folder graph: every folder may import it, and it imports nothing.
