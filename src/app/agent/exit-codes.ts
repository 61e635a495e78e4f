/** Exit code of an invalid configuration file or invalid arguments. */
export const EXIT_INVALID_CONFIG = 2;
/** Exit code of a start that failed for another reason (port taken, unreadable certificate...). */
export const EXIT_START_FAILED = 1;
