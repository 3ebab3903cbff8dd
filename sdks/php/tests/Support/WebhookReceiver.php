<?php

declare(strict_types=1);

namespace Pagamentos\Tests\Support;

/**
 * A webhook endpoint on `php -S` that records what it receives (webhook-receiver.php).
 */
final class WebhookReceiver
{
    private function __construct(public readonly PhpServer $server, private readonly string $log)
    {
    }

    public static function start(): self
    {
        $log = Process::tempDir('pagamentos-php-hooks-') . '/received.jsonl';
        touch($log);
        return new self(PhpServer::start(__DIR__ . '/webhook-receiver.php', ['RECEIVER_LOG' => $log]), $log);
    }

    public function url(): string
    {
        return $this->server->baseUrl . '/hooks';
    }

    /**
     * @return list<array{method: string, uri: string, getallheaders: array<string, string>,
     *     server: array<string, string>, body: string}>
     */
    public function received(): array
    {
        $lines = file($this->log, FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) ?: [];
        return array_map(static function (string $line): array {
            $request = json_decode($line, true);
            $request['body'] = base64_decode($request['body']);
            return $request;
        }, $lines);
    }

    /**
     * Waits for the first delivery whose decoded body satisfies `$match`.
     *
     * @param \Closure(array<string, mixed>): bool $match
     * @return array{method: string, uri: string, getallheaders: array<string, string>,
     *     server: array<string, string>, body: string}
     */
    public function waitFor(\Closure $match, string $what): array
    {
        return $this->server->process->waitFor(function () use ($match): ?array {
            foreach ($this->received() as $request) {
                $event = json_decode($request['body'], true);
                if (is_array($event) && $match($event)) {
                    return $request;
                }
            }
            return null;
        }, $what, 60);
    }
}
