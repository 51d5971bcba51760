// What the top bar shows, worked out from hauld's state on the bus: plain functions of plain values, with no import,
// so that tests.js runs them under gjs without a shell. The bus client (haulClient.js) fills the state, the
// indicator (indicator.js) draws the view.
//
// The state: {
//     onBus:      hauld owns its name,
//     responding: its last answer came in time (false greys the menu),
//     indicator:  the ActivityIndicator's properties (Visible, ...),
//     manager:    the Manager's properties (DownloadRateLimit, ...),
//     tasks:      [the Task properties of each task, unpacked, and `path`, its object path],
// }

const MEBIBYTE = 1048576;

/** The download limits the menu offers, in bytes per second (0: none), as hauld's tray menu does. */
export const DOWNLOAD_LIMITS = [0, MEBIBYTE, 5 * MEBIBYTE, 10 * MEBIBYTE];

/** "512 B", "1.5 KiB", "4.0 MiB": binary units with one decimal, as `haul` prints sizes. */
export function formatBytes(bytes) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let value = Math.max(0, Number(bytes) || 0);
    let unit = 0;
    while (value >= 1024 && unit < units.length - 1) {
        value /= 1024;
        unit += 1;
    }
    return unit === 0 ? `${Math.round(value)} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** A rate in bytes per second: "1.5 MiB/s". */
export function formatRate(bytesPerSecond) {
    return `${formatBytes(bytesPerSecond)}/s`;
}

/** A download limit's label: "None", "1 MiB/s", "2.5 MiB/s", "512.0 KiB/s". */
export function formatLimit(bytesPerSecond) {
    if (!bytesPerSecond)
        return 'None';
    if (bytesPerSecond % MEBIBYTE === 0)
        return `${bytesPerSecond / MEBIBYTE} MiB/s`;
    return formatRate(bytesPerSecond);
}

/** Why a queued task waits, in the words hauld's own panels use; null when it does not wait. */
export function waitingSentence(task) {
    if (task.State !== 'queued')
        return null;
    switch (task.WaitingFor) {
    case 'sleep': return 'Waiting for the computer to wake up';
    case 'network': return 'Waiting for the network';
    case 'unmetered': return 'Waiting for a network that is not metered';
    case 'power': return 'Waiting for power saver mode to end';
    case 'retry': return 'Waiting to try again';
    case 'slot': return 'Waiting for other transfers to finish';
    default: return 'Queued';
    }
}

/** The last non-empty element of a path or URL path, percent-decoded where that is valid. */
function lastElement(text) {
    const element = text.split(/[?#]/)[0].split('/').filter(part => part.length > 0).pop() ?? '';
    try {
        return decodeURIComponent(element);
    } catch {
        return element;
    }
}

/** The task's name: its file's name, else the last element of its URL, else "Transfer N". */
export function taskName(task) {
    const fromPath = task.Path && !task.Path.endsWith('/') ? lastElement(task.Path) : '';
    if (fromPath)
        return fromPath;
    const url = (task.URL ?? '').replace(/^[a-z]+:\/\/[^/]*/i, '');
    return lastElement(url) || `Transfer ${task.Id ?? ''}`.trim();
}

/** Bytes done and expected (-1: unknown) in the task's direction. */
function bytesOf(task) {
    if (task.Kind === 'upload')
        return {done: task.BytesSent ?? 0, expected: task.BytesExpectedToSend ?? -1};
    return {done: task.BytesReceived ?? 0, expected: task.BytesExpectedToReceive ?? -1};
}

/** The fraction done, 0 to 1, or null while the size is unknown. */
export function taskProgress(task) {
    const {done, expected} = bytesOf(task);
    if (expected > 0)
        return Math.min(1, Math.max(0, done / expected));
    if (task.State === 'completed' && !task.ErrorName)
        return 1;
    return null;
}

/** "42 % of 10.0 MiB", "4.0 MiB" while the size is unknown. */
export function progressText(task) {
    const {done, expected} = bytesOf(task);
    const fraction = taskProgress(task);
    if (expected > 0 && fraction !== null)
        return `${Math.floor(fraction * 100)} % of ${formatBytes(expected)}`;
    return formatBytes(done);
}

/** The task's state in words: the rate while it runs, why it waits, or how it ended. */
export function stateText(task) {
    switch (task.State) {
    case 'running': return task.Rate > 0 ? formatRate(task.Rate) : 'Starting';
    case 'queued': return waitingSentence(task);
    case 'suspended': return task.ErrorMessage ? `Suspended: ${task.ErrorMessage}` : 'Suspended';
    case 'canceling': return 'Cancelling';
    case 'completed':
        if (!task.ErrorName)
            return 'Finished';
        if (task.ErrorName.endsWith('.Cancelled'))
            return 'Cancelled';
        return task.ErrorMessage ? `Failed: ${task.ErrorMessage}` : 'Failed';
    default: return task.State ?? '';
    }
}

/** A short word for the row's title, beside the name. */
function shortState(task) {
    switch (task.State) {
    case 'running': {
        const fraction = taskProgress(task);
        return fraction === null ? formatBytes(bytesOf(task).done) : `${Math.floor(fraction * 100)} %`;
    }
    case 'queued': return 'Queued';
    case 'suspended': return 'Suspended';
    case 'canceling': return 'Cancelling';
    case 'completed':
        if (!task.ErrorName)
            return 'Finished';
        return task.ErrorName.endsWith('.Cancelled') ? 'Cancelled' : 'Failed';
    default: return '';
    }
}

/**
 * One transfer's row: its title, its detail line and which actions it allows. `applicationName` turns the task's
 * `Application` (a desktop-file id, or an executable's name) into what the user knows it as.
 */
export function taskRow(task, applicationName = id => id) {
    const unfinished = task.State !== 'completed';
    const name = taskName(task);
    const application = task.Application ? applicationName(task.Application) || task.Application : '';
    const detail = [application, progressText(task), stateText(task)].filter(part => part).join(' · ');
    return {
        id: task.Id,
        path: task.path,
        name,
        application,
        title: `${name} — ${shortState(task)}`,
        progress: taskProgress(task),
        progressText: progressText(task),
        stateText: stateText(task),
        detail,
        canSuspend: (task.State === 'running' || task.State === 'queued') && task.Pausable !== false,
        canResume: task.State === 'suspended',
        canCancel: unfinished && task.State !== 'canceling' && task.Cancellable !== false,
    };
}

/** Everything the indicator shows; `applicationName` as for taskRow. */
export function menuView(state, applicationName = id => id) {
    const onBus = Boolean(state.onBus);
    const greyed = onBus && state.responding === false;
    const tasks = [...(state.tasks ?? [])].sort((a, b) => (a.Id ?? 0) - (b.Id ?? 0));
    // A hauld that does not answer keeps its rows on screen, with every action off until it answers again.
    const rows = tasks.map(task => taskRow(task, applicationName))
        .map(row => greyed ? {...row, canSuspend: false, canResume: false, canCancel: false} : row);
    const limit = Number(state.manager?.DownloadRateLimit ?? 0);
    const limits = DOWNLOAD_LIMITS.includes(limit)
        ? DOWNLOAD_LIMITS : [...DOWNLOAD_LIMITS, limit].sort((a, b) => a - b);
    let status = null;
    if (!onBus)
        status = 'Haul is not running';
    else if (greyed)
        status = 'Haul is not responding';
    else if (rows.length === 0)
        status = 'No transfers';
    return {
        iconVisible: onBus && state.indicator?.Visible === true,
        greyed,
        status,
        rows,
        suspendAll: rows.some(row => row.canSuspend),
        resumeAll: rows.some(row => row.canResume),
        cancelAll: rows.some(row => row.canCancel),
        limitsEnabled: onBus && !greyed,
        limitTitle: `Download limit: ${formatLimit(limit)}`,
        limits: limits.map(value => ({value, label: formatLimit(value), selected: value === limit})),
    };
}
