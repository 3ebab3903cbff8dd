<?php

declare(strict_types=1);

namespace Pagamentos;

use Pagamentos\Exception\InvalidArgumentException;
use Pagamentos\Exception\InvalidHeaderException;
use Pagamentos\Exception\InvalidPayloadException;
use Pagamentos\Exception\InvalidSecretException;
use Pagamentos\Exception\InvalidShapeException;
use Pagamentos\Exception\MissingHeaderException;
use Pagamentos\Exception\RawBodyRequiredException;
use Pagamentos\Exception\SignatureMismatchException;
use Pagamentos\Exception\StaleTimestampException;
use Pagamentos\Resource\Event;

/**
 * Webhook deliveries, signed as Standard Webhooks (standardwebhooks.com) sign them:
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{raw body}">`,
 * keyed with the base64-decoded part of the `whsec_` secret; several space-separated
 * signatures while a rotated secret is still honoured.
 */
final class Webhook
{
    public const DEFAULT_TOLERANCE_SECONDS = 300;
    public const SECRET_PREFIX = 'whsec_';

    private const ID = 'webhook-id';
    private const TIMESTAMP = 'webhook-timestamp';
    private const SIGNATURE = 'webhook-signature';

    /**
     * Verifies a delivery and returns its event. Throws a WebhookVerificationException subclass
     * naming the reason otherwise: answer 400 then, and do not process it.
     *
     * @param mixed $payload the raw body, exactly as received: `file_get_contents('php://input')`
     * @param mixed $headers the request headers in any of the usual forms: `getallheaders()`,
     *        `$_SERVER` (HTTP_WEBHOOK_ID), name => [values] (PSR-7 `getHeaders()`, Laravel and
     *        Symfony `$request->headers`), or a PSR-7 message itself; names in any case
     * @param mixed $secret the endpoint's `whsec_...` secret, or a list of them (during a rotation)
     * @param int $toleranceSeconds how far `webhook-timestamp` may be from now, either way
     * @param int|null $now unix seconds to check against (tests); default the clock
     * @throws Exception\WebhookVerificationException
     */
    public static function verify(
        mixed $payload,
        mixed $headers,
        mixed $secret,
        int $toleranceSeconds = self::DEFAULT_TOLERANCE_SECONDS,
        ?int $now = null,
    ): Event {
        if (!is_string($payload)) {
            throw new RawBodyRequiredException(sprintf(
                'Pass the raw request body as a string (file_get_contents(\'php://input\'), or '
                . '$request->getContent() in Laravel), not %s: the signature covers the exact bytes sent.',
                get_debug_type($payload),
            ));
        }
        if ($payload === '') {
            // A delivery is a JSON event, never empty: an empty body is one already read (php://input
            // is empty the second time in many SAPIs), not a changed body or a wrong secret.
            throw new RawBodyRequiredException(
                'The raw body is empty: a webhook delivery always has one. php://input may already have been '
                . 'read (by your code or a framework): read it once, before anything else, and pass that string.',
            );
        }
        if ($toleranceSeconds < 0) {
            throw new InvalidArgumentException('toleranceSeconds cannot be negative.');
        }
        $keys = self::keys($secret);
        $found = self::webhookHeaders($headers);
        foreach ([self::ID, self::TIMESTAMP, self::SIGNATURE] as $name) {
            if (($found[$name] ?? []) === []) {
                throw new MissingHeaderException($name);
            }
        }

        $id = self::single($found, self::ID);
        $timestampText = self::single($found, self::TIMESTAMP);
        if (preg_match('/^[0-9]{1,12}$/', $timestampText) !== 1) {
            throw new InvalidHeaderException(self::TIMESTAMP, 'The webhook-timestamp header is not unix seconds.');
        }
        $timestamp = (int) $timestampText;
        $signatures = self::signatures($found[self::SIGNATURE]);

        $matched = false;
        foreach ($keys as $key) {
            $expected = self::signature($key, $id, $timestamp, $payload);
            foreach ($signatures as $candidate) {
                // Every pair is compared (no early exit), each in constant time.
                $matched = hash_equals($expected, $candidate) || $matched;
            }
        }
        if (!$matched) {
            throw new SignatureMismatchException(sprintf(
                'No signature matches the body with %s: the body, id or timestamp was changed, or the secret '
                . 'is not this endpoint\'s. Verify the raw body, not re-encoded JSON.',
                count($keys) > 1 ? 'any of the secrets' : 'the secret',
            ));
        }
        // Staleness is judged after the signature, so "stale" only ever describes an authentic
        // delivery: a forged one is reported as a mismatch whatever its timestamp.
        $now ??= time();
        if (abs($now - $timestamp) > $toleranceSeconds) {
            throw new StaleTimestampException($timestamp, $now, $toleranceSeconds);
        }

        try {
            $event = json_decode($payload, true, 512, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
        } catch (\JsonException $e) {
            throw new InvalidPayloadException('The body is signed but is not JSON: ' . $e->getMessage());
        }
        if (!is_array($event) || array_is_list($event)) {
            throw new InvalidPayloadException('The body is signed but is not a JSON object.');
        }
        try {
            return new Event($event);
        } catch (InvalidShapeException $e) {
            throw new InvalidPayloadException('The body is signed but is not an event: ' . $e->getMessage());
        }
    }

    /**
     * Signs a payload as the API does, for your own tests: returns the three headers to send
     * with it. With several secrets, one signature each (as during a rotation).
     *
     * @param string $payload the exact body you will send
     * @param string|list<string> $secret `whsec_...`
     * @param string|null $id the webhook-id (default: a random `msg_...`)
     * @param int|null $timestamp unix seconds (default: now)
     * @return array{webhook-id: string, webhook-timestamp: string, webhook-signature: string}
     */
    public static function sign(
        string $payload,
        string|array $secret,
        ?string $id = null,
        ?int $timestamp = null,
    ): array {
        $id ??= 'msg_' . bin2hex(random_bytes(12));
        if (preg_match('/^[\x21-\x7E]+$/', $id) !== 1) {
            throw new InvalidArgumentException('The webhook id must be printable ASCII without spaces.');
        }
        $timestamp ??= time();
        if ($timestamp < 0) {
            throw new InvalidArgumentException('The timestamp cannot be negative.');
        }
        $signatures = [];
        foreach (self::keys($secret) as $key) {
            $signatures[] = 'v1,' . self::signature($key, $id, $timestamp, $payload);
        }
        return [
            self::ID => $id,
            self::TIMESTAMP => (string) $timestamp,
            self::SIGNATURE => implode(' ', $signatures),
        ];
    }

    private static function signature(string $key, string $id, int $timestamp, string $payload): string
    {
        return base64_encode(hash_hmac('sha256', $id . '.' . $timestamp . '.' . $payload, $key, true));
    }

    /**
     * The HMAC keys of one secret or a list of them.
     *
     * @return non-empty-list<string>
     */
    private static function keys(mixed $secret): array
    {
        $secrets = is_array($secret) ? array_values($secret) : [$secret];
        if ($secrets === []) {
            throw new InvalidSecretException('No webhook secret given.');
        }
        $keys = [];
        foreach ($secrets as $i => $one) {
            $which = count($secrets) > 1 ? sprintf('secret #%d', $i + 1) : 'secret';
            if (!is_string($one) || !str_starts_with($one, self::SECRET_PREFIX)) {
                throw new InvalidSecretException(sprintf(
                    'The webhook %s must be a string starting with whsec_: copy it from the endpoint\'s '
                    . 'create or rotate-secret answer.',
                    $which,
                ));
            }
            $key = base64_decode(substr($one, strlen(self::SECRET_PREFIX)), true);
            if ($key === false || $key === '') {
                throw new InvalidSecretException(sprintf('The webhook %s is not base64 after whsec_.', $which));
            }
            $keys[] = $key;
        }
        return $keys;
    }

    /**
     * The three Standard Webhooks headers, whatever form the headers came in, each with every
     * value found (a header can arrive under several spellings, or repeated).
     *
     * @return array<string, list<string>>
     */
    private static function webhookHeaders(mixed $headers): array
    {
        if (is_object($headers) && !is_iterable($headers) && method_exists($headers, 'getHeaders')) {
            $headers = $headers->getHeaders(); // a PSR-7 message
        }
        if (!is_iterable($headers)) {
            throw new InvalidHeaderException(self::ID, sprintf(
                'Pass the request headers as an array (getallheaders(), $_SERVER or name => [values]), not %s.',
                get_debug_type($headers),
            ));
        }
        $found = [];
        foreach ($headers as $name => $values) {
            if (!is_string($name)) {
                continue;
            }
            $normalized = str_replace('_', '-', strtolower($name));
            if (str_starts_with($normalized, 'http-')) {
                $normalized = substr($normalized, strlen('http-')); // $_SERVER: HTTP_WEBHOOK_ID
            }
            if ($normalized !== self::ID && $normalized !== self::TIMESTAMP && $normalized !== self::SIGNATURE) {
                continue;
            }
            foreach (is_array($values) ? $values : [$values] as $value) {
                if (is_int($value)) {
                    $value = (string) $value;
                }
                if (!is_string($value)) {
                    throw new InvalidHeaderException($normalized, sprintf('The %s header is not text.', $normalized));
                }
                if (trim($value) !== '') {
                    $found[$normalized][] = trim($value);
                }
            }
        }
        return $found;
    }

    /** @param array<string, list<string>> $found */
    private static function single(array $found, string $name): string
    {
        $values = array_values(array_unique($found[$name]));
        if (count($values) > 1) {
            throw new InvalidHeaderException($name, sprintf('The request has several different %s values.', $name));
        }
        return $values[0];
    }

    /**
     * The `v1` signatures of the header(s). Entries are `<version>,<base64>`, space-separated as
     * sent, or joined with "," or ", " where a proxy, PSR-7's getHeaderLine() or PHP-FPM merged
     * repeated headers. Base64 has neither commas nor spaces, so an entry is a run without them, a
     * comma, and another such run, found wherever it starts after a separator. Other versions
     * (`v1a`, ...) are skipped, and an entry without a comma is ignored rather than read past.
     *
     * @param list<string> $values
     * @return list<string>
     */
    private static function signatures(array $values): array
    {
        $signatures = [];
        foreach ($values as $value) {
            preg_match_all('/(?<![^\s,])([^\s,]+),([^\s,]+)/', $value, $entries, PREG_SET_ORDER);
            foreach ($entries as [, $version, $signature]) {
                if ($version === 'v1') {
                    $signatures[] = $signature;
                }
            }
        }
        if ($signatures === []) {
            throw new InvalidHeaderException(
                self::SIGNATURE,
                'The webhook-signature header has no "v1,<base64>" signature.',
            );
        }
        return $signatures;
    }
}
