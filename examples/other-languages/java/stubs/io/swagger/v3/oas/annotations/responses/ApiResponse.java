package io.swagger.v3.oas.annotations.responses;

// A stand-in for swagger-annotations (see media/Schema.java).
@java.lang.annotation.Retention(java.lang.annotation.RetentionPolicy.CLASS)
public @interface ApiResponse {
  String responseCode() default "";
  String description() default "";
  io.swagger.v3.oas.annotations.media.Content[] content() default {};
}
