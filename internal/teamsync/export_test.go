package teamsync

// DirectPush is directPush, for the tests of the claim's push.
var DirectPush = directPush
