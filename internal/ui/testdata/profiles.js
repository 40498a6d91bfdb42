'use strict';
// Drives the inspector's Profiles page in headless Chromium through the
// project's playwright-core, as an operator would: read the table, delete a
// profile (only at the second click), be told why a deletion was refused,
// import storage states, and follow a profile to its sessions and back.
// Configuration comes as JSON in PROFILES_CHECK; the outcome is one JSON
// line on stdout; a failed expectation exits non-zero with the reason.
const { config, checker, run } = require('./browsercheck.js');

const cfg = config('PROFILES_CHECK');
const check = checker('profiles');

run(cfg, check, async (page) => {
  const row = (name) => page.locator('#profiles tr[data-profile="' + name + '"]');
  const nextPoll = () => page.waitForResponse((r) => new URL(r.url()).pathname === '/profiles' && r.request().method() === 'GET');
  const deleted = async () => (await page.request.get(cfg.base + '/test/deleted')).json();
  // No profile's contents may reach the page, whatever it shows.
  const noSecrets = async (where) => {
    const html = await page.content();
    for (const s of cfg.secrets) check(!html.includes(s), where + ': the page holds a profile\'s contents');
  };

  // The nav leads to the table.
  await page.goto(cfg.base + '/ui/');
  await page.click('#nav-profiles');
  await page.waitForSelector('#profiles tr[data-profile="github"]');
  check(await page.getAttribute('#nav-profiles', 'class') === 'current', 'the nav does not mark Profiles');
  const gh = row('github');
  check((await gh.locator('td.version').textContent()) === '3', 'github version');
  check((await gh.locator('td.origins').textContent()) === 'github.com, https://github.com', 'github origins');
  check(!(await gh.locator('td.expiry').textContent()).includes('expired'), 'github marked expired');
  check(/\d/.test(await gh.locator('td.expiry').textContent()), 'github expiry is not a date');
  const links = await gh.locator('td.sessions a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  check(JSON.stringify(links) === JSON.stringify(['#/session/s-prof-1', '#/session/s-prof-2']), 'github sessions ' + JSON.stringify(links));
  check((await row('old.login').locator('td.expiry .expired').textContent()) === 'expired', 'old.login is not marked expired');
  check((await row('hostile').locator('td.expiry').textContent()) === 'none', 'a profile without persistent cookies');
  check((await row('hostile').locator('td.origins').textContent()) === cfg.hostileOrigin, 'the hostile origin is not shown as text');
  check(await page.locator('#profiles img').count() === 0, 'an origin became markup');
  await noSecrets('the table');
  if (cfg.screenshot) await page.screenshot({ path: cfg.screenshot });

  // Delete asks again, keeps asking across polls, and Cancel takes it back.
  await gh.locator('button[data-action="delete"]').click();
  const really = gh.locator('button[data-action="really-delete"]');
  check((await really.textContent()) === 'Really delete github?', 'the confirmation reads ' + await really.textContent());
  await nextPoll();
  check(await really.count() === 1, 'a poll forgot the confirmation');
  check((await deleted()).length === 0, 'deleted at the first click');
  await gh.locator('button[data-action="cancel"]').click();
  check(await gh.locator('button[data-action="delete"]').count() === 1, 'Cancel did not take the confirmation back');
  check((await deleted()).length === 0, 'Cancel deleted');
  await gh.locator('button[data-action="delete"]').click();
  await really.click();
  await page.waitForSelector('#profiles tr[data-profile="github"]', { state: 'detached' });
  check(JSON.stringify(await deleted()) === '["github"]', 'deleted ' + JSON.stringify(await deleted()));
  check((await page.locator('#profiles-message').textContent()).startsWith('Deleted profile github.'), 'no word of the deletion');

  // A refused deletion says why and keeps the row.
  await row('locked').locator('button[data-action="delete"]').click();
  await row('locked').locator('button[data-action="really-delete"]').click();
  await page.waitForFunction(() => document.querySelector('#profiles-message').textContent.includes('FORBIDDEN'));
  check(await row('locked').count() === 1, 'a refused deletion removed the row');
  check(await page.getAttribute('#profiles-message', 'class') === 'error', 'the refusal is not shown as an error');

  // Import: a bad name, a malformed state (the field named), a good one.
  const file = (name, text) => ({ name, mimeType: 'application/json', buffer: Buffer.from(text) });
  await page.fill('#import-name', 'Not A Name');
  await page.setInputFiles('#import-file', file('auth.json', cfg.importFile));
  await page.click('#import button[type="submit"]');
  await page.waitForFunction(() => document.querySelector('#profiles-message').textContent.includes('is not a profile name'));
  await page.fill('#import-name', 'broken');
  await page.setInputFiles('#import-file', file('bad.json', cfg.badFile));
  await page.click('#import button[type="submit"]');
  await page.waitForFunction(() => document.querySelector('#profiles-message').textContent.includes('cookies[0].domain'));
  check(await row('broken').count() === 0, 'a malformed state became a profile');
  await page.fill('#import-name', 'imported');
  await page.setInputFiles('#import-file', file('auth.json', cfg.importFile));
  await page.click('#import button[type="submit"]');
  await page.waitForSelector('#profiles tr[data-profile="imported"]');
  check((await page.locator('#profiles-message').textContent()) === 'Imported profile imported, version 1.', 'import message ' + await page.locator('#profiles-message').textContent());
  check((await row('imported').locator('td.origins').textContent()) === 'https://imported.example, imported.example', 'imported origins');
  check(await page.inputValue('#import-name') === '', 'the form was not cleared');
  await noSecrets('after the import');

  // The sessions list names each session's profile; a session's page
  // says which, its version, whether it writes back, and its conflicts.
  await page.click('#nav-sessions');
  await page.waitForSelector('#sessions tr[data-session="s-prof-1"]');
  check((await page.locator('#sessions tr[data-session="s-prof-1"] td.profile').textContent()) === 'github', 'the sessions list\'s profile');
  check((await page.locator('#sessions tr[data-session="s-plain"] td.profile').textContent()) === '', 'a session without a profile shows one');
  await page.goto(cfg.base + '/ui/#/session/s-prof-1');
  await page.waitForSelector('#session-profile');
  const writes = await page.locator('#session-profile').textContent();
  check(writes === 'Started from profile github (version 3) · writes its state back when it closes or is suspended', 'session profile reads ' + writes);
  await page.goto(cfg.base + '/ui/#/session/s-prof-2');
  await page.waitForFunction(() => (document.querySelector('#session-profile') || {}).textContent === 'Started from profile github (version 2) · does not write back');
  check(await page.locator('#timeline tr.event[data-event="profile_conflict"]').count() === 1, 'the profile conflict is not in the timeline');
  await page.goto(cfg.base + '/ui/#/session/s-plain');
  await page.waitForSelector('#timeline');
  await page.waitForFunction(() => document.querySelector('h1 code') && document.querySelector('h1 code').textContent === 's-plain');
  check(await page.locator('#session-profile').count() === 0, 'a session without a profile shows one');
  check(!(await page.locator('main').textContent()).includes('null'), 'the page shows "null"');
  await page.goto(cfg.base + '/ui/#/session/s-prof-1');
  await page.waitForSelector('#session-profile');
  // A session's profile links to the table, its row marked.
  check(await page.getAttribute('#session-profile a', 'href') === '#/profiles/github', 'the session\'s profile link');
  await page.goto(cfg.base + '/ui/#/profiles/locked');
  await page.waitForSelector('#profiles tr.current[data-profile="locked"]');
  check(await page.locator('#profiles tr.current').count() === 1, 'more than one row marked');
  await noSecrets('at the end');
});
