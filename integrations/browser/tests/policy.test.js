// Tests of policy.js under gjs (`gjs -m policy.test.js`; HostTests' ExtensionPolicyTests runs it): one line
// "ok NAME" or "not ok NAME: why" per test, then the exit status 1 if any failed.
import GLib from 'gi://GLib';
import System from 'system';
import {
    answerWithin, cookieHeader, cookieStoreFor, downloadURL, expectedSize, handOffRequest, readAnswer,
    reasonToLeave, settingsFrom, suggestedName, DEFAULT_SETTINGS,
} from '../extension/policy.js';

const tests = [];
const test = (name, body) => tests.push({ name, body });

function same(actual, expected) {
    const [a, b] = [JSON.stringify(actual), JSON.stringify(expected)];
    if (a !== b) throw new Error(`${a} is not ${b}`);
}

// A download as Chromium's onDeterminingFilename gives it; Firefox's onCreated item has the same members.
const download = (fields = {}) => ({
    id: 1, url: 'https://example.org/get/7', finalUrl: 'https://cdn.example.org/files/report.pdf',
    referrer: 'https://example.org/reports', filename: 'report.pdf', incognito: false, state: 'in_progress',
    totalBytes: 5_000_000, fileSize: 0, ...fields,
});
const on = DEFAULT_SETTINGS;

test('an http(s) download is taken by default', () => {
    same(reasonToLeave(download(), on), null);
    same(reasonToLeave(download({ finalUrl: 'http://example.org/a' }), on), null);
    same(reasonToLeave(download({ finalUrl: 'HTTPS://EXAMPLE.ORG/A' }), on), null);
});

test('blob:, data:, file: and other schemes stay with the browser', () => {
    for (const url of ['blob:https://example.org/0b1c', 'data:text/plain,hi', 'file:///etc/passwd',
        'ftp://example.org/a', 'filesystem:https://example.org/x', 'about:blank', '', 'example.org/a',
        'javascript:alert(1)', 'httpx://example.org']) {
        const reason = reasonToLeave(download({ url, finalUrl: url }), on);
        if (reason === null) throw new Error(`${url} was taken`);
    }
});

test('the final URL decides, not the link', () => {
    same(downloadURL(download()), 'https://cdn.example.org/files/report.pdf');
    same(downloadURL(download({ finalUrl: '' })), 'https://example.org/get/7');
    same(downloadURL(download({ finalUrl: undefined })), 'https://example.org/get/7');
    if (reasonToLeave(download({ url: 'https://example.org/a', finalUrl: 'data:,x' }), on) === null) {
        throw new Error('a redirect to data: was taken');
    }
});

test('private windows only when allowed', () => {
    if (reasonToLeave(download({ incognito: true }), on) === null) throw new Error('a private download was taken');
    same(reasonToLeave(download({ incognito: true }), { ...on, privateWindows: true }), null);
});

test('switched off, nothing is taken', () => {
    if (reasonToLeave(download(), { ...on, enabled: false }) === null) throw new Error('taken while off');
});

test('the minimum size applies to known sizes only', () => {
    const settings = { ...on, minimumSize: 1_000_000 };
    if (reasonToLeave(download({ totalBytes: 999_999 }), settings) === null) throw new Error('small one taken');
    same(reasonToLeave(download({ totalBytes: 1_000_000 }), settings), null);
    same(reasonToLeave(download({ totalBytes: 0, fileSize: 0 }), settings), null);
    same(reasonToLeave(download({ totalBytes: -1, fileSize: -1 }), settings), null);
    if (reasonToLeave(download({ totalBytes: 0, fileSize: 10 }), settings) === null) throw new Error('fileSize');
});

test('downloads of extensions and finished ones stay with the browser', () => {
    if (reasonToLeave(download({ byExtensionId: 'abc' }), on) === null) throw new Error('an extension\'s taken');
    same(reasonToLeave(download({ byExtensionId: '' }), on), null);
    for (const state of ['complete', 'interrupted']) {
        if (reasonToLeave(download({ state }), on) === null) throw new Error(`${state} taken`);
    }
    same(reasonToLeave(download({ state: undefined }), on), null);
});

test('settings: malformed values become the defaults', () => {
    same(settingsFrom(undefined), DEFAULT_SETTINGS);
    same(settingsFrom(null), DEFAULT_SETTINGS);
    same(settingsFrom('on'), DEFAULT_SETTINGS);
    same(settingsFrom({ enabled: 'no', minimumSize: -5, privateWindows: 1 }), DEFAULT_SETTINGS);
    for (const minimumSize of [1.5, NaN, Infinity, '10', 2 ** 60]) {
        same(settingsFrom({ minimumSize }).minimumSize, 0);
    }
    same(settingsFrom({ enabled: false, minimumSize: 10, privateWindows: true }),
        { enabled: false, minimumSize: 10, privateWindows: true });
});

test('the expected size', () => {
    same(expectedSize(download()), 5_000_000);
    same(expectedSize(download({ totalBytes: 0, fileSize: 42 })), 42);
    same(expectedSize(download({ totalBytes: -1, fileSize: -1 })), null);
    same(expectedSize(download({ totalBytes: 'big', fileSize: undefined })), null);
});

test('the suggested name without Firefox\'s folder', () => {
    same(suggestedName('/home/u/Downloads/report.pdf'), 'report.pdf');
    same(suggestedName('report.pdf'), 'report.pdf');
    same(suggestedName('C:\\Users\\u\\report.pdf'), 'report.pdf');
    same(suggestedName(''), '');
    same(suggestedName(undefined), '');
});

test('the cookie header: longer paths first, otherwise in order', () => {
    same(cookieHeader([]), '');
    same(cookieHeader(undefined), '');
    same(cookieHeader([
        { name: 'a', value: '1', path: '/' },
        { name: 'b', value: '2', path: '/files/deep' },
        { name: 'c', value: '3', path: '/files' },
        { name: 'd', value: '4', path: '/' },
        { name: '', value: 'bare', path: '/' },
    ]), 'b=2; c=3; a=1; d=4; bare');
});

test('the cookie store: the item\'s, else the private one, else the default', () => {
    same(cookieStoreFor(download({ cookieStoreId: 'firefox-container-2' }), []), 'firefox-container-2');
    same(cookieStoreFor(download(), [{ id: '0' }]), undefined);
    same(cookieStoreFor(download({ incognito: true }), [{ id: '0' }, { id: '1' }]), '1');
    same(cookieStoreFor(download({ incognito: true }), [{ id: 'x', incognito: false }, { id: 'p', incognito: true }]),
        'p');
});

test('the message for the host', () => {
    const cookies = [{ name: 'session', value: 's3cret', path: '/' }];
    same(handOffRequest(download(), cookies, 'UA/1'), {
        type: 'download', url: 'https://cdn.example.org/files/report.pdf', referrer: 'https://example.org/reports',
        filename: 'report.pdf', cookies: 'session=s3cret', userAgent: 'UA/1', totalBytes: 5_000_000,
    });
    const bare = handOffRequest(download({ referrer: 'about:blank', filename: undefined, totalBytes: 0 }), [], 7);
    same([bare.referrer, bare.filename, bare.cookies, bare.userAgent, bare.totalBytes], ['', '', '', '', -1]);
});

test('the host\'s answer', () => {
    same(readAnswer({ ok: true, task: '/t/1', path: '/home/u/Downloads' }),
        { taken: true, task: '/t/1', path: '/home/u/Downloads' });
    same(readAnswer({ ok: true, task: '/t/1' }), { taken: true, task: '/t/1', path: '' });
    same(readAnswer({ ok: false, error: 'x', message: 'no' }), { taken: false, reason: 'no' });
    const refusals = [undefined, null, 'ok', 1, {}, { ok: 'true', task: '/t/1' }, { ok: true }, { ok: true, task: 1 }];
    for (const answer of refusals) {
        if (readAnswer(answer).taken) throw new Error(`${JSON.stringify(answer)} counted as taken`);
    }
});

test('an answer within the time, and none after it', async () => {
    same(await answerWithin(Promise.resolve(5), 1000), 5);
    const started = Date.now();
    let failure = null;
    await answerWithin(new Promise(() => {}), 50).catch((error) => { failure = error; });
    if (failure === null) throw new Error('a promise that never settles was answered');
    if (Date.now() - started < 50) throw new Error('gave up early');
    let rejected = null;
    await answerWithin(Promise.reject(new Error('no host')), 1000).catch((error) => { rejected = error.message; });
    same(rejected, 'no host');
});

const loop = new GLib.MainLoop(null, false);
let failed = 0;
(async () => {
    for (const { name, body } of tests) {
        try {
            await body();
            print(`ok ${name}`);
        } catch (error) {
            failed += 1;
            print(`not ok ${name}: ${error.message}`);
        }
    }
    loop.quit();
})();
loop.run();
System.exit(failed === 0 ? 0 : 1);
