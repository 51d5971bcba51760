// The names of hauld's D-Bus contract (dbus/org.haul.Haul1.xml) that the extension uses; tests.js checks each
// against that document.

export const BUS_NAME = 'org.haul.Haul1';
export const ROOT_PATH = '/org/haul/Haul1';
export const MANAGER_PATH = '/org/haul/Haul1/Manager';
export const TASKS_PATH = '/org/haul/Haul1/Tasks';

export const MANAGER_INTERFACE = 'org.haul.Haul1.Manager';
export const INDICATOR_INTERFACE = 'org.haul.Haul1.ActivityIndicator';
export const TASK_INTERFACE = 'org.haul.Haul1.Task';

/** The members called, by interface. */
export const MANAGER_METHODS = ['SuspendAll', 'ResumeAll', 'CancelAll'];
export const TASK_METHODS = ['Suspend', 'Resume', 'Cancel'];
/** The properties read (Application is newer than some hauld versions: shown when present). */
export const MANAGER_PROPERTIES = ['DownloadRateLimit'];
export const INDICATOR_PROPERTIES = ['Visible'];
export const TASK_PROPERTIES = [
    'Id', 'Kind', 'URL', 'Path', 'State', 'BytesReceived', 'BytesExpectedToReceive', 'BytesSent',
    'BytesExpectedToSend', 'Rate', 'Pausable', 'Cancellable', 'ErrorName', 'ErrorMessage', 'WaitingFor',
];
export const OPTIONAL_TASK_PROPERTIES = ['Application'];
export const DOWNLOAD_LIMIT_PROPERTY = 'DownloadRateLimit';
