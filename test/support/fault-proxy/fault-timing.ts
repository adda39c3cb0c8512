// The client timeouts and the late reply the fault targets share. An unfaulted command through
// the proxy must answer within the client's timeout even on a busy machine (300 ms was not
// always enough), and a late reply must come well after that timeout, so that it is late.

/** The client gives up on a command after this long. */
export const CLIENT_TIMEOUT_MS = 1_000;
/** A client that is to resend gets more time: a Cluster client first refreshes its view of the nodes. */
export const RESENDING_CLIENT_TIMEOUT_MS = 3_000;
/** A delayed reply reaches the client this long after the server answered. */
export const LATE_REPLY_MS = 2_000;
/**
 * A connection whose request was dropped is cut this long after: once the client has timed out
 * on it, so that the client meets the timeout the fault stands for, not a closed connection.
 */
export const STALL_CUT_MS = CLIENT_TIMEOUT_MS + 500;
