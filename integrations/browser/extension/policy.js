// What the extension decides, as plain functions of plain values: no browser API is called here, so that
// tests/policy.test.js runs them under gjs. background.js feeds them the browser's download items and acts.

/** The native-messaging host that hands a download to hauld (its manifests name it). */
export const HOST_NAME = 'org.haul.haul';

/** How long the host may take to answer before the browser keeps the download. */
export const ANSWER_TIMEOUT_MS = 2000;

export const DEFAULT_SETTINGS = Object.freeze({ enabled: true, minimumSize: 0, privateWindows: false });

/** The settings from what storage holds, each field checked: anything missing or malformed is the default. */
export function settingsFrom(stored) {
    const values = stored !== null && typeof stored === 'object' ? stored : {};
    const size = values.minimumSize;
    return {
        enabled: typeof values.enabled === 'boolean' ? values.enabled : DEFAULT_SETTINGS.enabled,
        minimumSize: Number.isSafeInteger(size) && size >= 0 ? size : DEFAULT_SETTINGS.minimumSize,
        privateWindows:
            typeof values.privateWindows === 'boolean' ? values.privateWindows : DEFAULT_SETTINGS.privateWindows,
    };
}

/** The URL the browser fetches the download from: the final one, after redirects, when the browser knows it. */
export function downloadURL(download) {
    return typeof download.finalUrl === 'string' && download.finalUrl !== '' ? download.finalUrl : download.url;
}

/** The size the browser expects, or null when it does not know it. */
export function expectedSize(download) {
    for (const size of [download.totalBytes, download.fileSize]) {
        if (Number.isSafeInteger(size) && size > 0) return size;
    }
    return null;
}

/** Whether `text` is an http or https URL (by its scheme: gjs, which runs the tests, has no URL class). */
function isHTTP(text) {
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(typeof text === 'string' ? text : '');
    return scheme !== null && ['http', 'https'].includes(scheme[1].toLowerCase());
}

/**
 * Why the browser keeps `download`, or null when Haul takes it. hauld fetches a URL again with the page's cookies,
 * so what it cannot fetch the same way stays with the browser: `blob:`, `data:`, `file:` and every other
 * non-http(s) URL, and downloads another extension started (it waits for the browser's own item).
 */
export function reasonToLeave(download, settings) {
    if (!settings.enabled) return 'the hand-off is switched off';
    if (typeof download.byExtensionId === 'string' && download.byExtensionId !== '') {
        return 'an extension started it';
    }
    if (download.state !== undefined && download.state !== 'in_progress') return 'it is no longer in progress';
    if (!isHTTP(downloadURL(download))) return 'its URL is not http or https';
    if (download.incognito === true && !settings.privateWindows) return 'it comes from a private window';
    const size = expectedSize(download);
    if (size !== null && size < settings.minimumSize) return 'it is smaller than the minimum size';
    return null;
}

/** The file name the browser suggests, without the folder Firefox puts before it. */
export function suggestedName(filename) {
    if (typeof filename !== 'string') return '';
    const parts = filename.split(/[/\\]/);
    return parts[parts.length - 1];
}

/**
 * The cookie store holding the download's cookies: Firefox names it on the item (private windows, containers);
 * Chromium's private windows use the store whose id is "1", which getAllCookieStores lists without a flag.
 * Undefined means the default store.
 */
export function cookieStoreFor(download, stores) {
    if (typeof download.cookieStoreId === 'string' && download.cookieStoreId !== '') return download.cookieStoreId;
    if (download.incognito !== true) return undefined;
    const flagged = (stores ?? []).find((store) => store.incognito === true);
    return flagged ? flagged.id : '1';
}

/** A `Cookie` header as a browser sends it: longer paths first (RFC 6265 §5.4), otherwise in the store's order. */
export function cookieHeader(cookies) {
    return (cookies ?? [])
        .map((cookie, index) => ({ cookie, index }))
        .sort((a, b) => b.cookie.path.length - a.cookie.path.length || a.index - b.index)
        .map(({ cookie }) => (cookie.name === '' ? cookie.value : `${cookie.name}=${cookie.value}`))
        .join('; ');
}

/** The message for the host: everything hauld needs to fetch the file as the browser would. */
export function handOffRequest(download, cookies, userAgent) {
    const referrer = typeof download.referrer === 'string' && isHTTP(download.referrer) ? download.referrer : '';
    return {
        type: 'download',
        url: downloadURL(download),
        referrer,
        filename: suggestedName(download.filename),
        cookies: cookieHeader(cookies),
        userAgent: typeof userAgent === 'string' ? userAgent : '',
        totalBytes: expectedSize(download) ?? -1,
    };
}

/** Whether the host's answer says that hauld did what was asked, with the task and the path it writes. */
export function readAnswer(answer) {
    if (answer === null || typeof answer !== 'object') return { taken: false, reason: 'the host gave no answer' };
    if (answer.ok === true && typeof answer.task === 'string') {
        return { taken: true, task: answer.task, path: typeof answer.path === 'string' ? answer.path : '' };
    }
    const message = typeof answer.message === 'string' ? answer.message : 'the host refused it';
    return { taken: false, reason: message };
}

/** `promise`'s value, or a rejection once `milliseconds` have passed without one. */
export function answerWithin(promise, milliseconds) {
    let timer;
    const late = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${milliseconds} ms`)), milliseconds);
    });
    return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
