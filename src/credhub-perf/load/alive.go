package load

// aliveCheck: an idle connection is looked at before a request takes it
// (idleconn.Alive: the lean client's, and those net/http's gate dialled
// before a step). Tests turn it off to see the retry alone cover what the
// look would have caught.
var aliveCheck = true
