<?php

/**
 * Router for `php -S`: records every request it receives, as PHP hands it over (the
 * getallheaders() array, the $_SERVER entries, the raw body), one JSON line each in the file
 * RECEIVER_LOG names, and answers 204.
 */

declare(strict_types=1);

$server = [];
foreach ($_SERVER as $name => $value) {
    if (str_starts_with($name, 'HTTP_') || str_starts_with($name, 'CONTENT_')) {
        $server[$name] = $value;
    }
}
file_put_contents((string) getenv('RECEIVER_LOG'), json_encode([
    'method' => $_SERVER['REQUEST_METHOD'],
    'uri' => $_SERVER['REQUEST_URI'],
    'getallheaders' => getallheaders(),
    'server' => $server,
    'body' => base64_encode((string) file_get_contents('php://input')),
]) . "\n", FILE_APPEND | LOCK_EX);
http_response_code(204);
