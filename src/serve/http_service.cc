// What the `ferrite` executable itself holds of serve/http_service.h: the
// ChatML default and the interface's destructor. The server (http_server.cc)
// is reached through the HTTP module (cli/http_module.h).
#include "ferrite/serve/http_service.h"

namespace ferrite::serve {

const char* const kChatMlTemplate =
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\\n' }}{% endif %}";

HttpService::~HttpService() = default;

}  // namespace ferrite::serve
