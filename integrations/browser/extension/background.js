// The extension's service worker (Chromium) or event page (Firefox): it hears of each download as the browser
// starts it, asks policy.js whether Haul takes it, and if so hands it to the native host org.haul.haul, which
// creates the task in hauld. Whatever goes wrong on the way, the browser keeps its own download.
//
// Two messages per download: `download` creates the task suspended, and once the browser's own download is
// stopped, `start` resumes it (or `withdraw` removes it, when the browser finished first or the answer came too
// late). A file is thus fetched once and kept once.
import {
    ANSWER_TIMEOUT_MS, HOST_NAME, answerWithin, cookieStoreFor, downloadURL, handOffRequest, readAnswer,
    reasonToLeave, settingsFrom, suggestedName,
} from './policy.js';

const api = globalThis.browser ?? globalThis.chrome;

/** The host's answer within the time the browser waits, read by policy.js; rejects when there is none. */
async function ask(message) {
    return readAnswer(await answerWithin(api.runtime.sendNativeMessage(HOST_NAME, message), ANSWER_TIMEOUT_MS));
}

/**
 * Offers a download to the host. An answer that comes too late, once the browser has kept the download, is not
 * lost either: the task it names is withdrawn, so that the file is fetched once.
 */
async function askToTake(request) {
    const answer = api.runtime.sendNativeMessage(HOST_NAME, request);
    try {
        return readAnswer(await answerWithin(answer, ANSWER_TIMEOUT_MS));
    } catch (error) {
        answer.then((late) => {
            const task = readAnswer(late);
            if (task.taken) ask({ type: 'withdraw', task: task.task }).catch(() => {});
        }, () => {});
        throw error;
    }
}

/** The task hauld created for `download`, or null when the browser keeps the download. Never throws. */
async function offer(download) {
    const name = suggestedName(download.filename) || downloadURL(download);
    try {
        if (reasonToLeave(download, settingsFrom(await api.storage.local.get(null))) !== null) return null;
        const stores = download.incognito ? await api.cookies.getAllCookieStores() : [];
        const storeId = cookieStoreFor(download, stores);
        const query = storeId === undefined ? { url: downloadURL(download) } : { url: downloadURL(download), storeId };
        const cookies = await api.cookies.getAll(query);
        const answer = await askToTake(handOffRequest(download, cookies, navigator.userAgent));
        if (answer.taken) return answer;
        await say(`Haul did not take ${name} (${answer.reason}); the browser downloads it`);
    } catch (error) {
        await say(`Haul could not be reached (${error.message}); the browser downloads ${name}`);
    }
    return null;
}

/** Stops the browser's own download of what Haul now has, then starts Haul's task. */
async function handOver(download, task) {
    const name = suggestedName(download.filename);
    try {
        await api.downloads.cancel(download.id);
    } catch {
        // Finished already (Firefox does not wait for the host): the state below says so.
    }
    const [now] = await api.downloads.search({ id: download.id });
    if (now !== undefined && now.state === 'complete') {
        await ask({ type: 'withdraw', task: task.task }).catch(() => {});
        return;
    }
    await api.downloads.erase({ id: download.id });
    const started = await ask({ type: 'start', task: task.task }).catch(() => ({ taken: false }));
    if (started.taken) {
        await countTaken(`Haul took ${name}`);
    } else {
        await say(`Haul holds ${name} paused: resume it there`);
    }
}

// The badge counts the downloads Haul took since the browser started; the button's title says the latest news.
async function countTaken(title) {
    const { taken = 0 } = await api.storage.session.get('taken');
    await api.storage.session.set({ taken: taken + 1 });
    await api.action.setBadgeBackgroundColor({ color: '#2a7ab0' });
    await api.action.setBadgeText({ text: String(taken + 1) });
    await say(title);
}

async function say(title) {
    try {
        await api.action.setTitle({ title });
    } catch {
        // The title only informs.
    }
}

if (api.downloads.onDeterminingFilename) {
    // Chromium holds the download until the listener suggests a name: nothing completes before Haul answers.
    api.downloads.onDeterminingFilename.addListener((download, suggest) => {
        offer(download)
            .then((task) => (task === null ? null : handOver(download, task)))
            .catch(() => {})
            .finally(() => suggest());
        return true;
    });
} else {
    // Firefox goes on downloading meanwhile: pausing it and resuming would request the file again without the
    // page as referrer. A small file may so finish first, and stays with the browser.
    api.downloads.onCreated.addListener(async (download) => {
        const task = await offer(download);
        if (task !== null) await handOver(download, task);
    });
}
